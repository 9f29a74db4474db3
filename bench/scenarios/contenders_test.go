package scenarios

import (
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/redisbench"
)

// The contenders the scenario tests run, from their own packages (the
// contender table is cmd/monolock-bench's).

// baseLocks are the locks without the floors, the waiting-strategy
// variants and the scenario-specific modes.
func baseLocks() []bench.Contender {
	return []bench.Contender{
		monolock.Contender(),
		redisbench.RedisContender(),
		redisbench.RedlockContender(),
		etcd.Contender(),
		postgres.Contender(),
		postgres.KeepaliveContender(),
	}
}

// safetyLocks are the rows the safety smoke test runs: the lock with
// tokens, the single Redis with and without its INCR token, and Redlock
// (the others take the same code paths; the test stays short).
func safetyLocks() []bench.Contender {
	return []bench.Contender{
		monolock.Contender(),
		redisbench.RedisContender(),
		redisbench.RedlockContender(),
		redisbench.RedisIncrContender(),
	}
}

// pgbouncerLocks are both PgBouncer rows: the session lock through
// transaction pooling (the pitfall) and the transaction lock.
func pgbouncerLocks() []bench.Contender {
	return []bench.Contender{postgres.PgBouncerContender(), postgres.PgBouncerXactContender()}
}

// holderContenders are the contenders a holder child of these tests can
// be asked to open.
func holderContenders() []bench.Contender {
	return append(append(baseLocks(), redisbench.RedisIncrContender()), pgbouncerLocks()...)
}
