// Package contenders is the contender table: one row per lock the suite
// measures, each described completely by its own package. Adding a
// contender is its package and one line here. cmd/monolock-bench runs the
// table; tests run the same rows instead of copies.
package contenders

import (
	"github.com/monolock/monolock-bench/bench"
	etcdlock "github.com/monolock/monolock-bench/bench/contenders/etcd"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	monolocker "github.com/monolock/monolock-bench/bench/contenders/monolock"
	pglock "github.com/monolock/monolock-bench/bench/contenders/postgres"
	"github.com/monolock/monolock-bench/redisbench"
)

// Table returns every contender in run and display order: the locks, then
// the floors.
func Table() []bench.Contender {
	return []bench.Contender{
		monolocker.Contender(),
		monolocker.WarmContender(),
		monolocker.FastOpenContender(),
		redisbench.RedisContender(),
		redisbench.RedlockContender(),
		etcdlock.Contender(),
		pglock.Contender(),
		pglock.KeepaliveContender(),
		redisbench.RedisSpinContender(),
		redisbench.RedlockSpinContender(),
		redisbench.RedisIncrContender(),
		floors.TCP(),
		floors.Redis(),
	}
}
