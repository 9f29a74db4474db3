// Package redisbench is the Redis family of contenders: Redis, a
// single-instance SET NX PX lock with a watchdog as Redisson does it, and
// Redlock, redsync v4 over five independent masters, each with redsync's
// jittered retry delay and a fast spin. It describes their servers
// (Server, RedlockMasters), their coordinator counters (INFO
// commandstats) and their rows of the contender table (RedisContender and
// the others). Redisson's lock and fair lock, reproduced in Go on the same
// server, are the packages redisbench/redisson and redisbench/redissonfair
// (what they share is in redisbench/internal/redissonlock).
//
// Every parameter that shapes a figure (TTL, waiting strategy, tries,
// watchdog interval, pool size) is explicit and reported by Settings.
package redisbench
