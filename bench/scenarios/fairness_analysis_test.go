package scenarios

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestJain(t *testing.T) {
	tests := []struct {
		name string
		xs   []int64
		want float64
	}{
		{"equal shares", []int64{5, 5, 5, 5}, 1},
		{"one client gets all", []int64{10, 0, 0, 0}, 0.25},
		{"1 2 3", []int64{1, 2, 3}, 36.0 / 42.0}, // 6² / (3·14)
		{"3 1", []int64{3, 1}, 0.8},              // 4² / (2·10)
		{"nobody", []int64{0, 0}, 0},
		{"empty", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Jain(tt.xs); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Jain(%v) = %v, want %v", tt.xs, got, tt.want)
			}
		})
	}
}

// msDur builds times in milliseconds for readable cases.
func msDur(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// granted is a request granted at grant and released at rel (ms).
func granted(client int, req, grant, rel float64) FairnessRequest {
	return FairnessRequest{Client: client, Requested: msDur(req), Granted: true, Grant: msDur(grant), End: msDur(grant), Released: msDur(rel)}
}

// waiting is a request that never got the lock: ended at end (ms) or, with
// end < 0, still pending at the end of the run.
func waiting(client int, req, end float64) FairnessRequest {
	r := FairnessRequest{Client: client, Requested: msDur(req), End: Pending}
	if end >= 0 {
		r.End = msDur(end)
	}
	return r
}

func TestAnalyzeFairness(t *testing.T) {
	tests := []struct {
		name     string
		reqs     []FairnessRequest
		clients  int
		from, to float64 // window, ms
		slack    float64 // ms
		// want
		grants        []int64
		inversions    int64
		strict        int64
		waits         []float64 // ms, in grant order
		held          float64   // ms
		wantJainEqual bool
	}{
		{
			name: "strict FIFO, back to back",
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), granted(1, 1, 10, 20), granted(2, 2, 20, 30),
			},
			clients: 3, from: 0, to: 100,
			grants: []int64{1, 1, 1}, waits: []float64{0, 9, 18}, held: 30, wantJainEqual: true,
		},
		{
			name: "a later request overtakes a pending one",
			// c1 asked at 1, c2 at 2; c2 was served first (at 10): one
			// inversion. c1's own grant at 20 overtook nobody.
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), granted(1, 1, 20, 30), granted(2, 2, 10, 20),
			},
			clients: 3, from: 0, to: 100,
			grants: []int64{1, 1, 1}, inversions: 1, strict: 1, waits: []float64{0, 8, 19}, held: 30, wantJainEqual: true,
		},
		{
			name: "overtaking two pending requests is one inversion",
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), waiting(1, 1, -1), waiting(2, 2, -1), granted(3, 3, 10, 20),
			},
			clients: 4, from: 0, to: 100,
			grants: []int64{1, 0, 0, 1}, inversions: 1, strict: 1, waits: []float64{0, 7}, held: 20,
		},
		{
			name: "a request that failed before the grant is not overtaken",
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), waiting(1, 1, 5), granted(2, 2, 10, 20),
			},
			clients: 3, from: 0, to: 100,
			grants: []int64{1, 0, 1}, waits: []float64{0, 8}, held: 20,
		},
		{
			name: "requests within the slack count as simultaneous",
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), granted(1, 1.0, 20, 30), granted(2, 1.5, 10, 20),
			},
			clients: 3, from: 0, to: 100, slack: 1,
			grants: []int64{1, 1, 1}, inversions: 0, strict: 1, waits: []float64{0, 8.5, 19}, held: 30, wantJainEqual: true,
		},
		{
			name: "window: warm-up requests can be overtaken, warm-up grants are not counted",
			// c1's request from the warm-up (at 1) is still pending when c2
			// is granted at 12 inside the window [10, 40): one inversion.
			// c0's grant at 0 and c3's grant at 50 are outside the window;
			// c3 overtook c1 too, but is not counted.
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), waiting(1, 1, -1), granted(2, 2, 12, 22), granted(3, 30, 50, 60),
			},
			clients: 4, from: 10, to: 40,
			grants: []int64{0, 0, 1, 0}, inversions: 1, strict: 1, waits: []float64{10}, held: 10,
		},
		{
			name: "held time is the union, clipped to the window",
			// [0,10] and [5,15] overlap (a release seen late), [20,30] is
			// cut at 25 by the window [5, 25): 5..15 + 20..25 = 15. Requests made
			// at the same moment do not overtake each other.
			reqs: []FairnessRequest{
				granted(0, 0, 0, 10), granted(1, 0, 5, 15), granted(2, 0, 20, 30),
			},
			clients: 3, from: 5, to: 25,
			grants: []int64{0, 1, 1}, waits: []float64{5, 20}, held: 15,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := AnalyzeFairness(tt.reqs, tt.clients, msDur(tt.from), msDur(tt.to), msDur(tt.slack))
			if !slices.Equal(f.Grants, tt.grants) {
				t.Errorf("Grants = %v, want %v", f.Grants, tt.grants)
			}
			if f.Inversions != tt.inversions || f.StrictInversions != tt.strict {
				t.Errorf("inversions = %d (strict %d), want %d (strict %d)", f.Inversions, f.StrictInversions, tt.inversions, tt.strict)
			}
			var waits []float64
			for _, w := range f.Waits {
				waits = append(waits, float64(w)/float64(time.Millisecond))
			}
			if !slices.Equal(waits, tt.waits) {
				t.Errorf("Waits = %v ms, want %v", waits, tt.waits)
			}
			if f.Held != msDur(tt.held) {
				t.Errorf("Held = %v, want %vms", f.Held, tt.held)
			}
			if tt.wantJainEqual != (f.Jain == 1) {
				t.Errorf("Jain = %v, want equal shares: %v", f.Jain, tt.wantJainEqual)
			}
			if f.Jain != Jain(f.Grants) {
				t.Errorf("Jain = %v, not Jain(Grants) = %v", f.Jain, Jain(f.Grants))
			}
		})
	}
}
