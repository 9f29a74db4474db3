// Package load generates the measured load. Its engine (Run) is the one
// load generator of the suite: a Traffic of clients, each one request at
// a time, driven by an open loop's Schedule (requests due at their
// intended start whatever the lock does; latency counts from it, so a
// backlog shows: coordinated omission corrected, as wrk2 and k6 measure)
// or by a closed-loop Plan per client (acquire → hold → release →
// think). A run is continuous: a warm-up, then a measured window of
// intended starts, bracketed by reads of CPU and counters at its edges,
// and a stop that cuts holds, cancels waits and records them as
// censored. Every request is one Event of the run's Log, and every figure
// is computed from the log (Tally, FromIntended, ContendedWaits,
// Handovers, Recorder).
//
// Measure runs the scenarios' closed loop (ClosedLoop: a fixed key and
// hold per worker) against a contender and reads CPU and the Probes the
// loop names at the window's edges. A workload file's clients run on the
// same engine, in this process or spread over child processes
// (Processes).
package load
