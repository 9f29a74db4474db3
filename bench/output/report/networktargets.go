package report

import (
	"fmt"

	"github.com/monolock/monolock-bench/bench/analysis"
)

// targetsTable lays out the targets the analysis checked
// (analysis.NetworkTargets), one row per statement and profile.
func targetsTable(d *document, ts []analysis.Target) {
	t := table{head: []string{"target", "profile", "verdict", "figures"}, labels: 2}
	for _, x := range ts {
		t.rows = append(t.rows, []cell{{text: x.Statement}, {text: x.Profile}, {text: string(x.Verdict), class: string(x.Verdict)}, {text: x.Evidence}})
	}
	if len(t.rows) == 0 {
		return
	}
	d.h3("Targets")
	d.p(fmt.Sprintf("The network issue's targets: the contenders' targets at the profile they name, the floors' claims under every profile, the measured round trip within %.0f%% of the asked at %s, and whether the delay line limited the locks/s at the most workers. That is measured where the run has a profile of no delay (rtt=0): the same contenders through the line and on loopback. Without one it is inferred: the line limited a step whose workers fell below %.0f%% of the rate one worker reaches alone (so the round trip did not bound them, the CPU did) while it took %.0f%% or more of the CPU the step used; it did not where they kept that rate, or where it took less than %.0f%%.",
		100*analysis.RTTTolerance, analysis.RTTTargetProfile, 100*analysis.RTTBound, 100*analysis.LineShareBottleneck, 100*analysis.LineShareFree))
	d.add(t)
}
