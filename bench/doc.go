// Package bench is the core of the benchmark harness: the consumer-side
// seam every lock under test implements (Locker, Held), the timing
// decorator that measures around it (Timed, Recorder), CPU accounting, the
// Deployment a backend hands over, and the Runner that takes a plain table
// of Scenarios and Contenders, runs every combination with warm-up and
// repetitions, and fills a results.Results.
//
// The core never names a contender: redisbench and the monolock adapter
// implement the seam, the backends (bench/local, bench/external,
// containers) implement Deployment, and cmd/monolock-bench wires the
// tables.
package bench
