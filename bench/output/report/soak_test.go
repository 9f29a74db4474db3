package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// soakFixture is chaosFixture made a soak: alpha skipped the clock steps
// beta took, and both carry the per-kind rates of running double holders
// and of stale writes behind the fence.
func soakFixture(t *testing.T) *results.Results {
	t.Helper()
	r := chaosFixture(t)
	r.Parameters.Scenario["chaos"][results.ChaosSoakSetting] = "150 faults per contender of the kinds every contender takes, and 27 clock steps"
	r.Parameters.Scenario["chaos"]["side_by_side"] = "3 contenders' steps at once at most"
	r.Environment.Cores = 2
	rate := func(k, n int, lo, hi float64) results.ChaosRate {
		return results.ChaosRate{Violations: k, Trials: n, Rate: float64(k) / float64(n), Lo: lo, Hi: hi}
	}
	for i := range r.Raw {
		c := r.Raw[i].Chaos
		v := &c.Verdict
		v.Faults = map[string]int{"client-pause": 75, "server-kill": 75}
		v.Skipped, v.SkipReasons = nil, nil
		if r.Raw[i].Contender == "alpha" {
			v.Skipped, v.SkipReasons = map[string]int{"clock-step": 27}, map[string]string{"clock-step": "monotonic leases"}
		} else {
			v.Faults["clock-step"] = 27
		}
		all := rate(0, 150, 0, 0.025)
		v.RunningRate = &all
		v.RunningRateByKind = map[string]results.ChaosRate{"client-pause": rate(0, 75, 0, 0.0487), "server-kill": rate(0, 75, 0, 0.0487)}
		if r.Raw[i].Contender == "beta" {
			some := rate(3, 177, 0.0058, 0.0487)
			v.RunningRate = &some
			v.RunningRateByKind["server-kill"] = rate(3, 75, 0.0137, 0.1109)
			v.RunningRateByKind["clock-step"] = rate(0, 27, 0, 0.1246)
		}
		for j := range v.Stores {
			if v.Stores[j].Fenced {
				v.Stores[j].StaleRate = &all
				v.Stores[j].StaleRateByKind = v.RunningRateByKind
			}
		}
		c.CPU = &results.ChaosCPU{Seconds: 500, ClientsMS: 25000, ServerMS: 10000, ServerSource: "/proc/<pid>/stat"}
	}
	return r
}

// TestChaosScheduleSaysWhatDiffered: the section says which kinds every
// contender took alike and which only some did, instead of "the same
// schedule" over trials that differ.
func TestChaosScheduleSaysWhatDiffered(t *testing.T) {
	rep, err := Render(soakFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	for _, want := range []string{
		"Every contender took as many faults of each kind, but clock-step 27 for beta only (others skip it).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestSoakBounds: a soak's chaos section gives per lock and per kind the
// running double holders and the fenced store's stale writes as k/n with
// the Wilson interval, a lock without tokens says so, and each step's CPU
// is shown.
func TestSoakBounds(t *testing.T) {
	rep, err := Render(soakFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	for _, want := range []string{
		"### Bounds per fault kind (soak)",
		"| lock | all faults | client-pause | server-kill | clock-step | violations in all |",
		"| alpha | 0/150 (≤ 2.5%) | 0/75 (≤ 4.9%) | 0/75 (≤ 4.9%) | skipped (27) | 0 |",
		"| beta | 3/177 (0.6–4.9%) | 0/75 (≤ 4.9%) | 3/75 (1.4–11.1%) | 0/27 (≤ 12.5%) | 1 |",
		"| beta | no tokens: the fenced store rejects every write | — | — | — | — |",
		"and of its servers (/proc/<pid>/stat), as a share of one core over the step (a server killed by the schedule counts from its last restart: a lower bound); the machine has 2 cores, and the steps ran side by side: 3 contenders' steps at once at most",
		"| alpha | 500 | 5.0 | 2.0 |",
	} {
		if !strings.Contains(md, want) && !strings.Contains(md, mdEscape(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	plain, err := Render(chaosFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Markdown), "Bounds per fault kind") {
		t.Error("a run that is not a soak has the soak's bounds")
	}
}

// TestNewestSoakLinked: Write links the newest soak among the run
// folder's siblings from a run that is not one, a soak links none, and
// the index marks the soaks.
func TestNewestSoakLinked(t *testing.T) {
	reports := t.TempDir()
	save := func(dir string, r *results.Results) string {
		t.Helper()
		p := filepath.Join(reports, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.Save(filepath.Join(p, ResultsFile)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	older, newer := soakFixture(t), soakFixture(t)
	older.RunID, newer.RunID = "soak-old", "soak-new"
	newer.StartedAt = older.StartedAt.Add(time.Hour)
	save("soak-old", older)
	soakDir := save("soak-new", newer)
	full := chaosFixture(t)
	fullDir := save("full", full)

	if err := Write(fullDir, full); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(fullDir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[soak-new](../soak-new/report.md)"; !strings.Contains(string(md), want) && !strings.Contains(string(md), mdEscape(want)) {
		t.Errorf("the full run's report does not link the newest soak %s", want)
	}
	if err := Write(soakDir, newer); err != nil {
		t.Fatal(err)
	}
	if md, err = os.ReadFile(filepath.Join(soakDir, MarkdownFile)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "The newest chaos soak") {
		t.Error("a soak links another soak")
	}
	if err := WriteIndexWith(reports, nil); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(reports, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(index), "yes (chaos soak)"); n != 2 {
		t.Errorf("the index marks %d runs as soaks, want 2:\n%s", n, index)
	}
}
