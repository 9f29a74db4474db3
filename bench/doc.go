// Package bench is the core of the benchmark harness: the consumer-side
// seam every lock under test implements (Locker, Held, and Sleep, the wait
// of a Locker that polls), what a contender describes of itself
// (Contender, ServerSpec, Coordinator and Counts), the scenario table's
// types (Scenario, Variant, Env), the Deployment a backend hands over with
// a handle per server (Server, with the fault operations), and every
// optional capability a backend or server may offer (capabilities.go).
// It imports no backend and no client library.
//
// The groups around it, in the order imports may run:
//
//	bench/scenarios                     one file (or folder) per scenario
//	bench/run, bench/load/..., bench/faults/..., bench/check, bench/network
//	                                    the runner, the load generator, the fault tools
//	bench/backend/...                   where servers run (containers, local, external),
//	                                    and clockshift, a server's shifted wall clock
//	bench/host                          probes of this machine (/proc through procfs)
//	bench                               this package
//
// bench/results is the schema of results.json, which the core's
// types fill; bench/output/{report,compare} read results only.
// The core never names a contender (core_test.go checks it, and
// layering_test.go checks the imports): each contender package under
// bench/contenders (and redisbench) describes its servers, counters and
// settings; cmd/monolock-bench holds the scenario and contender tables.
package bench
