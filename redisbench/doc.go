// Package redisbench implements the bench seam (bench.Locker) for the Redis
// contenders: Redis, a single-instance SET NX PX lock with a watchdog as
// Redisson does it; Redlock, redsync v4 over five independent masters; and
// Floor, two PINGs on a persistent connection, the best any two-round-trip
// Redis lock can do.
//
// Every parameter that shapes a figure (TTL, waiting strategy, tries,
// watchdog interval, pool size) is explicit and reported by Settings.
package redisbench
