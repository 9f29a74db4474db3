package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/contenders/floors"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
)

// TestOldRunRenders renders the first reference run, written before the
// scenarios declared their figures in results.json (no scenario_info, no
// contender info), as `monolock-bench report` does: completed from
// today's declarations, contenders and claim rules. Every file is
// written, each scenario the run has gets its section under its declared
// title in report.md and details.md, the scenarios it predates get none,
// every contender is named, and the claims it cannot hold are listed.
func TestOldRunRenders(t *testing.T) {
	r, err := results.Load("testdata/reference-20261130T053533Z.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Scenarios) != 0 || len(r.Contenders) != 0 {
		t.Fatal("the fixture should predate scenario_info and contender info")
	}
	d := results.Defaults{Claims: claimRules(), Scenarios: declarations(r.Parameters.Quick)}
	for _, c := range []bench.Contender{
		monolock.Contender(), redisbench.RedisContender(), redisbench.RedlockContender(),
		redisbench.RedisSpinContender(), redisbench.RedlockSpinContender(), floors.TCP(), floors.Redis(),
	} {
		d.Contenders = append(d.Contenders, c.Info())
	}
	r.FillDefaults(d)
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md, details, html := read(MarkdownFile), read(DetailsFile), read(HTMLFile)
	if !strings.Contains(html, "<html") {
		t.Errorf("%s is no HTML page", HTMLFile)
	}

	// Every chart the report links is on disk, and there is one at least.
	links := regexp.MustCompile(ChartsDir+`/[^)"\s]+\.svg`).FindAllString(md+details, -1)
	if len(links) == 0 {
		t.Error("the report links no chart")
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
			t.Errorf("linked chart: %v", err)
		}
	}

	hasHeading := func(doc, title string) bool {
		return strings.Contains("\n"+doc, "\n## "+title)
	}
	ran := map[string]bool{}
	for _, name := range r.Parameters.Scenarios {
		ran[name] = true
	}
	if len(ran) < 4 {
		t.Fatalf("the run has scenarios %v", r.Parameters.Scenarios)
	}
	for _, info := range r.Scenarios {
		inMD, inDetails := hasHeading(md, info.Title), hasHeading(details, info.Title)
		if ran[info.Name] != inMD || ran[info.Name] != inDetails {
			t.Errorf("scenario %s (%q): in the run %v, section in report.md %v, in details.md %v", info.Name, info.Title, ran[info.Name], inMD, inDetails)
		}
		delete(ran, info.Name)
	}
	if len(ran) > 0 {
		t.Errorf("scenarios of the run with no declaration: %v", ran)
	}
	for _, name := range r.Parameters.Contenders {
		if !strings.Contains(md, name) {
			t.Errorf("contender %s not named in %s", name, MarkdownFile)
		}
	}
	claims := analysis.New(r).Claims()
	if len(claims) != len(r.Claims) || len(claims) == 0 {
		t.Fatalf("%d claims checked of %d rules", len(claims), len(r.Claims))
	}
	// A claim that fails is listed in report.md; an inconclusive one at
	// least in the appendix.
	for _, c := range claims {
		switch {
		case c.Verdict == analysis.ClaimFails && !strings.Contains(md, c.Claim):
			t.Errorf("claim %s (%s) not listed in %s", c.ID, c.Verdict, MarkdownFile)
		case c.Verdict != analysis.ClaimHolds && !strings.Contains(md+details, c.Claim):
			t.Errorf("claim %s (%s) listed neither in %s nor in %s", c.ID, c.Verdict, MarkdownFile, DetailsFile)
		}
	}
}
