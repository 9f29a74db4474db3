package analysis

import (
	"slices"

	"github.com/monolock/monolock-bench/bench/results"
)

// A BeatenFloor is a lock's figure better than a floor's in every
// repetition. A floor is the same exchange with no lock logic, the least
// a lock of its kind can cost on the path: a lock that beats it took
// other steps than the floor, or the measurement (a stall falling on one
// of them) made the difference. Either way the floor did not hold in the
// run, and a ratio to it says nothing.
type BeatenFloor struct {
	Lock, Floor string
	// LockValues and FloorValues are the figures, one per repetition.
	LockValues, FloorValues []float64
	Unit                    string
	// Below says the lock's figure lies below the floor's (lower is
	// better: a latency), else above it (a rate).
	Below bool
}

// BeatsFloor reports whether lock's figure (scenario, variant, metric) is
// better than floor's in every repetition: its worst repetition better
// than the floor's best, in the metric's declared direction. False when
// floor is not a floor, lock is one, either lacks the figure or the
// metric declares no direction.
func (run *Run) BeatsFloor(scenario, variant, metric, lock, floor string) (BeatenFloor, bool) {
	if !run.info[floor].Floor || run.info[lock].Floor {
		return BeatenFloor{}, false
	}
	lv, unit := run.values(scenario, lock, variant, metric)
	fv, _ := run.values(scenario, floor, variant, metric)
	if len(lv) == 0 || len(fv) == 0 {
		return BeatenFloor{}, false
	}
	info, _ := run.r.Scenario(scenario)
	m, _ := info.Metric(metric)
	var beats bool
	switch m.Better {
	case results.BetterHigher:
		beats = slices.Min(lv) > slices.Max(fv)
	case results.BetterLower:
		beats = slices.Max(lv) < slices.Min(fv)
	}
	if !beats {
		return BeatenFloor{}, false
	}
	return BeatenFloor{Lock: lock, Floor: floor, LockValues: lv, FloorValues: fv, Unit: unit, Below: m.Better == results.BetterLower}, true
}
