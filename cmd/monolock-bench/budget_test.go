package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/run"
)

func TestPlanBudget(t *testing.T) {
	for _, c := range []struct {
		quick  bool
		reps   int
		budget time.Duration
	}{{false, defaultRepetitions, 60 * time.Minute}, {true, quickRepetitions, 6 * time.Minute}} {
		r := &run.Runner{Scenarios: scenarioTable(tableOptions{}), Contenders: contenderTable(), Repetitions: c.reps, Quick: c.quick, Lease: defaultLease}
		p := r.Plan()
		t.Logf("quick=%v steps=%d total=%v", c.quick, p.Steps, p.Total.Round(time.Second))
		for _, s := range scenarioTable(tableOptions{}) {
			var b strings.Builder
			for _, ct := range contenderTable() {
				if d := p.Contender[s.Name][ct.Name]; d > 0 {
					fmt.Fprintf(&b, " %s=%.0f", ct.Name, d.Seconds())
				}
			}
			t.Logf("  %s %.1fmin:%s", s.Name, p.Scenario[s.Name].Minutes(), b.String())
		}
		_ = slices.Max[[]int]
	}
}
