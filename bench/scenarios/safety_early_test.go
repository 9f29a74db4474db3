package scenarios

import (
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/check"
)

// A grant within half a lease of the freeze is early; one when a lease
// lock's lease ran out (the handover's freeze trials: 0.75 lease at the
// least) is not.
func TestEarlyGrant(t *testing.T) {
	const lease = 2 * time.Second
	for _, tt := range []struct {
		after time.Duration
		want  bool
	}{
		{3 * time.Millisecond, true},
		{999 * time.Millisecond, true},
		{time.Second, false},
		{1494 * time.Millisecond, false},
	} {
		if got := earlyGrant(0, check.Mono(tt.after), lease); got != tt.want {
			t.Errorf("granted %v after the freeze: early %v, want %v", tt.after, got, tt.want)
		}
	}
}
