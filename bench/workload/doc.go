// Package workload reads workload files, a user's own lock traffic, and
// draws from them: which key each request takes, how long it holds it,
// when it arrives (open loop) or how long a client thinks between
// requests (closed loop). It holds no engine: the load generator that the
// scenarios use runs a Workload through its Schedule (open loop) or its
// Client plans (closed loop).
//
// A workload file is YAML, or JSON as YAML's subset:
//
//	name: job-queue
//	clients: 40                                  # or {count: 40, processes: 4}
//	keys: {count: 5000, distribution: zipfian, theta: 0.7}
//	arrivals: {loop: open, rate: 300/s, spacing: poisson}
//	hold: {p1: 20ms, p50: 50ms, p99: 200ms}
//	lease: 10s
//	duration: 4s
//	warmup: 1s
//	quick: {duration: 1s, warmup: 250ms}
//	thresholds: [acquire_p50 < 5ms, acquire_p99 < 250ms, failures < 0.1%, achieved_per_sec >= 99%]
//
// ready/job-queue.yaml is the annotated example: it explains every field.
// The ready workloads (cron, hot-counter, job-queue, leader-election) are
// embedded, so that Load takes their names as well as paths.
//
// Parse and Load check a file completely and return every problem at once
// as "file:line:col: what is wrong and what is allowed" (an *Error), and,
// for a valid file, Warnings: what is allowed but worth saying (holds that
// outlast the lease, more claims than open files, a rate its clients or
// its most used key cannot serve, a threshold on too few samples).
// CheckRate is the warning that needs a measured closed-loop maximum.
//
// Every random choice comes from the workload's seed through streams of
// its own (the open loop's schedule, each closed-loop client), so every
// contender gets the same requests.
package workload
