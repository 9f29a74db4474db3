package workload

import "testing"

func TestContendedShare(t *testing.T) {
	for _, c := range []struct {
		text   string
		lo, hi float64
	}{
		// One key: every other client's hold is in the way.
		{`{name: a, clients: 8, keys: 1, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}`, 1, 1},
		// One client never meets another.
		{`{name: a, clients: 1, keys: 1, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}`, 0, 0},
		// 2 clients over 1,000 uniform keys, always holding: 1 in 1,000.
		{`{name: a, clients: 2, keys: 1000, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}`, 0.0009, 0.0011},
		// Holding half the time halves it.
		{`{name: a, clients: 2, keys: 1000, arrivals: {loop: closed, think: 1ms}, hold: 1ms, lease: 1s, duration: 1s}`, 0.00045, 0.00055},
		// An open loop: 4/s over 32 keys held 2.5s each: 31%.
		{`{name: a, clients: 24, keys: 32, arrivals: {loop: open, rate: 4/s}, hold: 2500ms, lease: 3s, duration: 1s}`, 0.31, 0.32},
	} {
		w, _, err := Parse("t.yaml", []byte(c.text))
		if err != nil {
			t.Fatal(err)
		}
		if got := w.ContendedShare(); got < c.lo || got > c.hi {
			t.Errorf("%s: ContendedShare %g, want %g…%g", c.text, got, c.lo, c.hi)
		}
	}
}
