package report

import (
	"fmt"
	"strings"
)

// neverAt returns, in ms, the grant bound a failed trial's bar is capped
// at when the contender's waiter never got the lock within it (see
// analysis.Run.FailedFigure), or false.
func (f *figures) neverAt(scenario, c, variant, metric string) (float64, bool) {
	vals, _ := f.values(scenario, c, variant, metric)
	p := f.params(scenario, variant)
	lease, ok := f.duration(c, "lease")
	if len(vals) > 0 || p.GrantBound == nil || !ok || f.a.FailedFigure(scenario, c, variant, metric, false) == "" {
		return 0, false
	}
	return float64(p.GrantBound.At(lease).Nanoseconds()) / nanoseconds["ms"], true
}

// repetitionsText says how many repetitions the figures of each scenario
// rest on, read from the data: "latency n=3, scale n=1, handover n=2–3".
func (f *figures) repetitionsText() string {
	var parts []string
	for _, s := range f.scenarios() {
		lo, hi := 0, 0
		for _, x := range f.r.Summary {
			if x.Scenario != s || x.N == 0 {
				continue
			}
			if lo == 0 || x.N < lo {
				lo = x.N
			}
			hi = max(hi, x.N)
		}
		switch {
		case hi == 0:
		case lo == hi:
			parts = append(parts, fmt.Sprintf("%s n=%d", s, lo))
		default:
			parts = append(parts, fmt.Sprintf("%s n=%d–%d", s, lo, hi))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("the run asked for %d", f.r.Parameters.Repetitions)
	}
	return strings.Join(parts, ", ")
}
