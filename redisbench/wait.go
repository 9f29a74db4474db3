package redisbench

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Wait is the waiting strategy of a Redis contender: after a failed attempt
// it sleeps a uniformly random delay in [Min, Max).
type Wait struct {
	// Name is the strategy's name in reports.
	Name     string
	Min, Max time.Duration
}

// Waiting strategies. JitterWait is redsync's default (50–250ms), the
// default of both Redis contenders; SpinWait is the "fast spin" variant
// reported beside it.
var (
	JitterWait = Wait{Name: "redsync-jitter", Min: 50 * time.Millisecond, Max: 250 * time.Millisecond}
	SpinWait   = Wait{Name: "fast-spin", Min: 500 * time.Microsecond, Max: 1500 * time.Microsecond}
)

// Delay returns one random delay of the strategy.
func (w Wait) Delay() time.Duration {
	if w.Max <= w.Min {
		return w.Min
	}
	return w.Min + rand.N(w.Max-w.Min)
}

// String describes the strategy, e.g. "redsync-jitter uniform 50ms-250ms".
func (w Wait) String() string { return fmt.Sprintf("%s uniform %v-%v", w.Name, w.Min, w.Max) }
