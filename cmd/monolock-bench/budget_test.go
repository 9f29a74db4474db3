package main

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
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

// TestSoakPlanBudget: make bench-chaos (SOAK_FAULTS 150, SOAK_PARALLEL 3,
// the chaos scenario alone, no floors) fits its 60 minutes: the locks
// sharing a server role run one after another in one lane, the lanes
// side by side, longest first, as the scenario runs them. Every lock that
// a suite cap keeps out of the full run's chaos step for the suite's
// budget (SuiteOnly) runs in the soak.
func TestSoakPlanBudget(t *testing.T) {
	const faults, lanes, budget = 150, 3, 60 * time.Minute
	for seed := uint64(1); seed <= 4; seed++ {
		o := tableOptions{chaosSeed: seed, chaosFaults: faults, chaosParallel: lanes}
		var chaos []bench.Scenario
		for _, s := range scenarioTable(o) {
			if s.Name == "chaos" {
				chaos = append(chaos, s)
			}
		}
		var locks []bench.Contender
		for _, c := range contenderTable() {
			if !c.Floor {
				locks = append(locks, c)
			}
		}
		p := (&run.Runner{Scenarios: chaos, Contenders: locks, Repetitions: defaultRepetitions, Lease: defaultLease}).Plan()
		soak := chaos[0].Variants(false)[0]
		// A step's estimate is shared among the lanes (Variant.Estimate
		// over Parallel): one lock's step is lanes times its share.
		var order []string
		lane := map[string]time.Duration{}
		for _, c := range locks {
			d := p.Contender["chaos"][c.Name]
			suiteCapped := slices.ContainsFunc(c.Caps, func(k bench.Cap) bool { return k.Scenario == "chaos" && k.SuiteOnly })
			if suiteCapped && d <= 0 {
				t.Errorf("seed %d: %s is not planned in the soak, whose budget is its own", seed, c.Name)
			}
			if d <= 0 || soak.Skip(c) != "" { // the plan counts the locks the step skips inside
				continue
			}
			role := c.Server.Name
			if _, ok := lane[role]; !ok {
				order = append(order, role)
			}
			lane[role] += d * lanes
		}
		slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(lane[b], lane[a]) })
		// Each of the side-by-side runners takes the next lane when it
		// is free.
		busy := make([]time.Duration, lanes)
		for _, role := range order {
			i := slices.Index(busy, slices.Min(busy))
			busy[i] += lane[role]
		}
		total := slices.Max(busy)
		t.Logf("seed %d: %d lanes %v, planned %v", seed, len(order), busy, total.Round(time.Second))
		if total > budget {
			t.Errorf("seed %d: the soak plans %v, over its %v", seed, total.Round(time.Second), budget)
		}
	}
}
