package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// IndexFile is the index of runs inside the reports directory.
const IndexFile = "README.md"

// WriteIndexWith rebuilds reportsDir/README.md from the reportsDir/*/results.json
// present: one row per run, newest first, with its setup, whether it is
// partial, and its claims verdicts, linking to report.md and report.html.
// A results.json that does not load is listed with the reason instead of
// failing the index. The index depends on the files only, so rebuilding it
// without new runs changes nothing. upgrade, when not nil, is applied to
// every results file after loading (see RerenderWith).
func WriteIndexWith(reportsDir string, upgrade func(*results.Results)) error {
	paths, err := filepath.Glob(filepath.Join(reportsDir, "*", ResultsFile))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	type entry struct {
		dir string
		r   *results.Results
		err error
	}
	var entries []entry
	for _, p := range paths {
		r, err := results.Load(p)
		if err == nil && upgrade != nil {
			upgrade(r)
		}
		entries = append(entries, entry{filepath.Base(filepath.Dir(p)), r, err})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.r != nil && b.r != nil && !a.r.StartedAt.Equal(b.r.StartedAt) {
			return b.r.StartedAt.Compare(a.r.StartedAt)
		}
		return strings.Compare(b.dir, a.dir)
	})

	var b strings.Builder
	b.WriteString("# Benchmark reports\n\n")
	b.WriteString("Each folder holds one run of `monolock-bench run`: `results.json` (all raw data), `report.md` and `report.html` (rendered from it; `monolock-bench report DIR/results.json` re-renders them) and the charts. This index is generated from the `results.json` files present; nothing here is edited by hand. Compare two runs with `monolock-bench compare A/results.json B/results.json` (each side may be several runs joined by commas, pooled).\n\n")
	if len(entries) == 0 {
		b.WriteString("No runs yet: `make bench` makes one.\n")
	} else {
		b.WriteString("| run | started (UTC) | machine | backend | repetitions | complete | claims: holds / fails / inconclusive |\n")
		b.WriteString("|---|---|---|---|---:|---|---|\n")
	}
	for _, e := range entries {
		link := fmt.Sprintf("[%s](%s/%s) ([html](%s/%s))", mdCell(e.dir), e.dir, MarkdownFile, e.dir, HTMLFile)
		if e.err != nil {
			fmt.Fprintf(&b, "| %s | – | – | – | – | unreadable: %s | – |\n", mdCell(e.dir), mdCell(e.err.Error()))
			continue
		}
		r := e.r
		complete := "yes"
		if r.Partial {
			complete = "partial: " + r.PartialReason
		}
		if r.Parameters.Quick {
			complete += " (quick)"
		}
		if isSoak(r) {
			complete += " (chaos soak)"
		}
		holds, fails, inc := analysis.TallyClaims(analysis.New(r).Claims())
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %d / %d / %d |\n",
			link, r.StartedAt.UTC().Format("2006-01-02 15:04"),
			mdCell(fmt.Sprintf("%s, %d cores", orUnknown(r.Environment.CPUModel), r.Environment.Cores)),
			mdCell(backends(r)), r.Parameters.Repetitions, mdCell(complete), holds, fails, inc)
	}
	if err := os.MkdirAll(reportsDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("report: %w", err)
	}
	return writeIfChanged(filepath.Join(reportsDir, IndexFile), []byte(b.String()))
}

// backends names the run's backend, and a network profile's where it
// differs ("containers; az on local").
func backends(r *results.Results) string {
	text := r.Environment.Backend
	for _, n := range r.Networks {
		if n.Backend != "" && n.Backend != r.Environment.Backend {
			text += "; " + n.Profile + " on " + n.Backend
		}
	}
	return text
}
