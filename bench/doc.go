// Package bench is the core of the benchmark harness: the consumer-side
// seam every lock under test implements (Locker, Held), the timing
// decorator that measures around it (Timed, Recorder), CPU accounting,
// what a contender describes of itself (Contender, ServerSpec,
// Coordinator), the Deployment a backend hands over with a handle per
// server (Server, with the fault operations), and the Runner that takes a
// plain table of Scenarios and Contenders, runs every combination with
// warm-up and repetitions, and fills a results.Results.
//
// The core never names a contender (core_test.go checks it): each
// contender package under bench/contenders (and redisbench) describes its
// servers, counters and settings; the backends (bench/backend/local,
// bench/backend/containers, bench/backend/external) start whatever specs they are
// given; bench/contenders.Table is the contender table.
package bench
