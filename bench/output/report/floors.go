package report

import (
	"fmt"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// floorOf returns the floor of a lock's kind: the floor contender that a
// claim rule of the run compares with a lock of the same family (the
// tcp-floor with monolock, the redis-floor with redis); "" when none.
func (f *figures) floorOf(c string) string {
	for _, rule := range f.r.Claims {
		a, b := rule.Subject, rule.Than.Contender
		if f.isFloor(a) {
			a, b = b, a
		}
		if a != "" && b != "" && !f.isFloor(a) && f.isFloor(b) && f.family(a) == f.family(c) {
			return b
		}
	}
	return ""
}

// beatsFloor says, for the locks whose figure beats the floor of their
// kind in every repetition (analysis.BeatsFloor), that it does and why
// that can be, instead of a ratio to it: a floor is the same exchange
// without lock logic, so a lock that beats it takes other steps, as the
// contenders' recorded settings say. "" when no lock beats its floor.
func (f *figures) beatsFloor(s, variant, metric string) string {
	var parts []string
	side := "Above"
	for _, c := range f.locks(s) {
		floor := f.floorOf(c)
		b, ok := f.a.BeatsFloor(s, variant, metric, c, floor)
		if ok && b.Below {
			side = "Below"
		}
		if floor == "" || !ok {
			continue
		}
		part := fmt.Sprintf("%s %s against %s %s", c, results.Span(b.LockValues, b.Unit), floor, results.Span(b.FloorValues, b.Unit))
		claim, floorClaim := f.claimStep(c), f.claimStep(floor)
		if claim != "" && floorClaim != "" {
			part += fmt.Sprintf(": %s claims by “%s”, its floor by “%s”", c, claim, floorClaim)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return side + " the floor of their kind in every repetition: " + strings.Join(parts, "; ") +
		". A floor is the same exchange without lock logic, so a lock can beat it only by taking other steps per claim than the floor does (as their settings say), not by doing less lock work."
}

// claimStep is how a contender claims a lock, as its settings record it.
func (f *figures) claimStep(c string) string {
	set := f.r.Parameters.Contender[c]
	for _, k := range []string{"claim", "acquire"} {
		if v := set[k]; v != "" {
			return v
		}
	}
	return ""
}
