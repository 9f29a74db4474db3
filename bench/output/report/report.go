// Package report renders a benchmark run's results.json as report.md and a
// self-contained report.html (inline CSS and SVG charts, nothing loaded
// from the network), lays out the comparison's claims as bench/analysis
// checked them against the measured figures, and keeps the index of runs
// in reports/README.md.
//
// Rendering depends on the Results value only: no clock, no environment,
// sorted map keys and deterministic SVG, so re-rendering a results.json
// gives byte-identical files. Functions are safe for concurrent use.
package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// File names Write uses inside a report directory.
const (
	MarkdownFile = "report.md"
	DetailsFile  = "details.md"
	HTMLFile     = "report.html"
	ChartsDir    = "charts"
	ResultsFile  = "results.json"
)

// Report is a rendered report.
type Report struct {
	Markdown []byte
	// Details is details.md, the appendix report.md links to.
	Details []byte
	HTML    []byte
	// Charts are the SVG charts report.md links to as charts/<Name>.svg;
	// report.html carries the same charts inline.
	Charts []Chart
	// Claims are the claims checked, as shown in the report.
	Claims []analysis.Claim
}

// Chart is one SVG chart.
type Chart struct {
	Name string
	SVG  []byte
}

// Render renders r. It fails only when r holds data it cannot decode (a
// corrupt histogram); missing scenarios or contenders are reported as
// missing.
func Render(r *results.Results) (*Report, error) { return render(r, nil) }

// render renders r, linking the chaos soak soak when not nil.
func render(r *results.Results, soak *soakRef) (*Report, error) {
	all, r := r, r.FirstNetwork() // the sections read one network profile; networkSection reads all
	f := newFigures(r)
	f.soak = soak
	claims := f.a.Claims()
	d := &document{title: "monolock-bench report — run " + r.RunID}
	f.intro(d)
	f.decisionSection(d, all)
	f.runFacts(d)
	top := len(d.blocks)
	d.details("At a glance: the headline figures side by side", f.atAGlance)
	f.contenderList(d)
	f.claimsSection(d, claims)
	// The decision section answers from the same figures; the older
	// per-metric leaderboards stay in the appendix for the reader who
	// wants every ranking.
	d.details("Which lock when: a leaderboard per figure, and the trade-offs the contenders state", func(d *document) { f.guidance(d, claims) })
	f.claims = claims
	for _, s := range f.a.Scenarios() {
		if err := f.scenarioSection(d, s); err != nil {
			return nil, err
		}
	}
	if err := networkSection(d, all); err != nil {
		return nil, err
	}
	f.shortGlossary(d)
	d.details("Glossary", f.glossaryList)
	d.details("Method and caveats", f.method)
	d.withContents(top)
	rep := &Report{Markdown: d.markdown(), Details: d.detailsMarkdown(), HTML: d.html(), Claims: claims}
	var collect func([]block)
	collect = func(blocks []block) {
		for _, b := range blocks {
			switch c := b.(type) {
			case chart:
				rep.Charts = append(rep.Charts, Chart{Name: c.name, SVG: c.svg})
			case details:
				collect(c.blocks)
			}
		}
	}
	collect(d.blocks)
	return rep, nil
}

// Write renders r into dir: report.md, report.html and charts/*.svg. SVG
// files in charts/ that the report no longer uses are removed, so the
// directory always matches the report. The chaos section of a run that is not a soak links the newest soak
// among dir's siblings (reports/*/results.json), if there is one.
func Write(dir string, r *results.Results) error {
	var soak *soakRef
	if slices.Contains(r.Parameters.Scenarios, "chaos") && !isSoak(r) {
		soak = newestSoak(dir)
	}
	rep, err := render(r, soak)
	if err != nil {
		return err
	}
	charts := filepath.Join(dir, ChartsDir)
	if err := os.MkdirAll(charts, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	keep := map[string]bool{}
	for _, c := range rep.Charts {
		name := c.Name + ".svg"
		keep[name] = true
		if err := writeIfChanged(filepath.Join(charts, name), c.SVG); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(charts, "*.svg"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, p := range old {
		if !keep[filepath.Base(p)] {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("report: %w", err)
			}
		}
	}
	if err := writeIfChanged(filepath.Join(dir, MarkdownFile), rep.Markdown); err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(dir, DetailsFile), rep.Details); err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(dir, HTMLFile), rep.HTML)
}

// RerenderWith loads a results.json and writes its report beside it (the
// `monolock-bench report DIR/results.json` command), applying upgrade to
// the results after loading, such as a function that fills an old file's
// contender info and claim rules from today's contender table:
//
//	report.RerenderWith(path, func(r *results.Results) { r.FillDefaults(defaults) })
//
// upgrade may be nil.
func RerenderWith(resultsPath string, upgrade func(*results.Results)) error {
	r, err := results.Load(resultsPath)
	if err != nil {
		return err
	}
	if upgrade != nil {
		upgrade(r)
	}
	return Write(filepath.Dir(resultsPath), r)
}

// writeIfChanged writes data to path unless the file already holds exactly
// data, so re-rendering leaves unchanged files (and their mtimes) alone.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// anchor makes a heading id from text the way GitHub does for report.md:
// lower case, letters, digits, hyphens and underscores kept, spaces turned
// into hyphens, everything else dropped.
func anchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
