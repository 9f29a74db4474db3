// Package host probes the machine the bench runs on: the CPU time of a
// process, a process group and the bench itself, a server's memory from
// /proc or its container's cgroup, TCP sockets in TIME_WAIT, the kernel's
// TCP Fast Open counters and the description of the machine recorded in
// results.json. It reads and never changes the host's settings.
package host
