package sessions

// DefaultReserve is the open files FileLimits.MaxSessions keeps aside for
// everything but the sessions: a client's pool, the ops listener,
// /metrics scrapes, logs, the Go runtime.
const DefaultReserve = 256
