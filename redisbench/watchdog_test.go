package redisbench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchdogGivesUp checks the watchdog's promise on a fake clock
// (synctest): extensions every ttl/3; a lock whose extensions go
// unanswered is declared lost exactly GiveUpFactor × ttl after the start
// of the last confirmed one, before its TTL could run out on the server
// (which counts from no earlier than that start); a refused extension
// loses it at once.
func TestWatchdogGivesUp(t *testing.T) {
	const ttl = 3 * time.Second
	giveUp := time.Duration(GiveUpFactor * float64(ttl))
	for _, tc := range []struct {
		name      string
		confirmed int  // extensions confirmed before the rest
		refuse    bool // the next one is refused rather than unanswered
	}{
		{"silent from the grant", 0, false},
		{"silent after two extensions", 2, false},
		{"refused after one extension", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				granted := time.Now()
				last := granted // start of the last confirmed extension
				calls := 0
				extend := func(ctx context.Context) (bool, error) {
					calls++
					if calls <= tc.confirmed {
						last = time.Now()
						return true, nil
					}
					if tc.refuse {
						return false, nil
					}
					<-ctx.Done() // no answer
					if d, ok := ctx.Deadline(); !ok || d.After(last.Add(giveUp)) {
						t.Errorf("extension %d ran until %v, past the give-up moment %v", calls, d.Sub(granted), last.Add(giveUp).Sub(granted))
					}
					return false, ctx.Err()
				}
				w := StartWatchdog(ttl, granted, extend)
				defer w.Halt()
				<-w.Lost()
				want := last.Add(giveUp)
				if tc.refuse {
					want = granted.Add(time.Duration(tc.confirmed+1) * ttl / 3) // the refused extension's tick
				}
				if got := time.Now(); !got.Equal(want) {
					t.Errorf("lost %v after the grant, want %v (last confirmed extension started at %v)", got.Sub(granted), want.Sub(granted), last.Sub(granted))
				}
				if tc.refuse && calls != tc.confirmed+1 {
					t.Errorf("%d extensions, want %d (every ttl/3 until the refused one)", calls, tc.confirmed+1)
				}
			})
		})
	}
}
