package report

import (
	"fmt"
	"strings"
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

// belowFloor says, for the locks whose figure lies below the floor of
// their kind in every repetition (the whole range under the floor's), why
// that can be: a floor is the same exchange without lock logic, so a lock
// under it takes other steps, and the contenders' recorded settings say
// which. "" when no lock is under its floor.
func (f *figures) belowFloor(s, variant, metric string) string {
	var parts []string
	for _, c := range f.locks(s) {
		floor := f.floorOf(c)
		x, ok := f.row(s, c, variant, metric)
		fl, fok := f.row(s, floor, variant, metric)
		if floor == "" || !ok || !fok || x.Max >= fl.Min {
			continue
		}
		lock, _ := f.values(s, c, variant, metric)
		base, unit := f.values(s, floor, variant, metric)
		part := fmt.Sprintf("%s %s against %s %s", c, spanOf(lock).in(unit), floor, spanOf(base).in(unit))
		claim, floorClaim := f.claimStep(c), f.claimStep(floor)
		if claim != "" && floorClaim != "" {
			part += fmt.Sprintf(": %s claims by “%s”, its floor by “%s”", c, claim, floorClaim)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Below the floor of their kind in every repetition: " + strings.Join(parts, "; ") +
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
