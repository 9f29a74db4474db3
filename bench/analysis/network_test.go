package analysis

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// The round-trip target holds when the median over the paths of measured
// over asked is within RTTTolerance, fails outside it, and is
// inconclusive where the run has no RTTTargetProfile profile.
func TestRoundTripTarget(t *testing.T) {
	path := func(measured float64) results.NetworkPath {
		return results.NetworkPath{AskedRTTUS: 1000, RTT: results.SpreadUS{N: 10, P50: measured}}
	}
	for _, tt := range []struct {
		name     string
		profile  string
		paths    []results.NetworkPath
		want     ClaimVerdict
		evidence string
	}{
		{"within at the median", RTTTargetProfile, []results.NetworkPath{path(1050), path(1300), path(980)}, ClaimHolds, "2 of 3 within"},
		{"off at the median", RTTTargetProfile, []results.NetworkPath{path(1250), path(1300), path(980)}, ClaimFails, "1 of 3 within"},
		{"no round trip measured", RTTTargetProfile, nil, ClaimInconclusive, "no round trip measured"},
		{"no such profile", "wan", []results.NetworkPath{path(1000)}, ClaimInconclusive, "not measured"},
	} {
		nr := results.NetworkRun{Profile: tt.profile, AskedRTTUS: 1000, Paths: tt.paths}
		r := &results.Results{Networks: []results.NetworkRun{nr}}
		ts := NetworkTargets(r, []ProfileRun{{Network: nr, Run: New(r)}})
		var got *Target
		for i := range ts {
			if strings.HasPrefix(ts[i].Statement, "the measured round trip") {
				got = &ts[i]
			}
		}
		if got == nil {
			t.Fatalf("%s: no round-trip target in %+v", tt.name, ts)
		}
		if got.Verdict != tt.want || !strings.Contains(got.Evidence, tt.evidence) {
			t.Errorf("%s: %s (%s), want %s (%q)", tt.name, got.Verdict, got.Evidence, tt.want, tt.evidence)
		}
	}
}
