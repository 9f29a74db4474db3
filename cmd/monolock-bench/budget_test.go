package main

import (
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/run"
)

// TestPlanBudget: the runner's plan of the suite's tables (what it logs as
// estimated_total at the start) fits the budgets bench/README.md states: the full
// run (3 repetitions) within 60 minutes, the quick run within 6, on the
// 2-core reference machine; every contender takes part in some scenario
// of each, and every scenario plans some time. The chaos schedule's span
// depends on its seed: a few seeds are checked.
func TestPlanBudget(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		checkPlanBudget(t, tableOptions{chaosSeed: seed})
	}
}

func checkPlanBudget(t *testing.T, o tableOptions) {
	for _, c := range []struct {
		quick  bool
		reps   int
		budget time.Duration
	}{{false, defaultRepetitions, 60 * time.Minute}, {true, quickRepetitions, 6 * time.Minute}} {
		scs, cts := scenarioTable(o), contenderTable()
		r := &run.Runner{Scenarios: scs, Contenders: cts, Repetitions: c.reps, Quick: c.quick, Lease: defaultLease}
		p := r.Plan()
		var b strings.Builder
		for _, s := range scs {
			b.WriteString(" " + s.Name + "=" + p.Scenario[s.Name].Round(time.Second).String())
			if p.Scenario[s.Name] <= 0 {
				t.Errorf("quick=%v: %s plans no time", c.quick, s.Name)
			}
		}
		t.Logf("quick=%v: %d steps, %v:%s", c.quick, p.Steps, p.Total.Round(time.Second), b.String())
		if p.Total > c.budget {
			t.Errorf("quick=%v: planned %v, over the budget of %v", c.quick, p.Total.Round(time.Second), c.budget)
		}
		for _, ct := range cts {
			var d time.Duration
			for _, s := range scs {
				d += p.Contender[s.Name][ct.Name]
			}
			if d <= 0 {
				t.Errorf("quick=%v: %s runs nothing", c.quick, ct.Name)
			}
		}
	}
}
