// Package markdown renders the table of medians of one run as plain
// Markdown, for the terminal and CI logs at the end of a run; the full
// report (charts, claims checked) is bench/output/report.
package markdown

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
)

// Summary writes the run's header (id, partial flag, environment, notes)
// and one table per scenario: a row per variant and metric, a column per
// contender, each cell the median across repetitions with its min–max.
func Summary(w io.Writer, r *results.Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# monolock-bench run %s\n\n", r.RunID)
	if r.Partial {
		fmt.Fprintf(&b, "**Partial run:** %s\n\n", r.PartialReason)
	}
	e := r.Environment
	fmt.Fprintf(&b, "- machine: %s, %d cores (GOMAXPROCS %d), %s/%s, kernel %s, %s\n",
		e.CPUModel, e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Kernel, e.GoVersion)
	fmt.Fprintf(&b, "- backend: %s; network path: %s\n", e.Backend, e.NetworkPath)
	if len(e.Sysctls) > 0 {
		keys := slices.Sorted(maps.Keys(e.Sysctls))
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+e.Sysctls[k])
		}
		fmt.Fprintf(&b, "- sysctls: %s\n", strings.Join(kv, ", "))
	}
	var versions []string
	for _, s := range e.Servers {
		if v := s.Role + " " + s.Version; s.Version != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	if len(versions) > 0 {
		fmt.Fprintf(&b, "- server versions: %s\n", strings.Join(versions, ", "))
	}
	if e.DockerVersion != "" {
		fmt.Fprintf(&b, "- Docker engine %s\n", e.DockerVersion)
	}
	for _, im := range e.Images {
		fmt.Fprintf(&b, "- image %s: %s (%s)\n", im.Role, im.Ref, im.Source)
	}
	fmt.Fprintf(&b, "- repetitions: %d; quick: %v; started %s, finished %s\n\n",
		r.Parameters.Repetitions, r.Parameters.Quick, r.StartedAt.Format("2006-01-02 15:04:05Z07:00"), r.FinishedAt.Format("15:04:05Z07:00"))

	for _, scenario := range r.Parameters.Scenarios {
		rows := filter(r.Summary, func(x results.Row) bool { return x.Scenario == scenario })
		if len(rows) == 0 {
			continue
		}
		contenders := unique(rows, func(x results.Row) string { return x.Contender })
		fmt.Fprintf(&b, "## %s\n\nMedian across repetitions (min–max).\n\n", scenario)
		fmt.Fprintf(&b, "| variant | metric | unit | %s |\n", strings.Join(contenders, " | "))
		fmt.Fprintf(&b, "|---|---|---|%s\n", strings.Repeat("---:|", len(contenders)))
		type figure struct{ variant, metric, unit string }
		var figures []figure
		cells := map[figure]map[string]results.Row{}
		for _, x := range rows {
			f := figure{x.Variant, x.Metric, x.Unit}
			if cells[f] == nil {
				figures = append(figures, f)
				cells[f] = map[string]results.Row{}
			}
			cells[f][x.Contender] = x
		}
		for _, f := range figures {
			fmt.Fprintf(&b, "| %s | %s | %s |", f.variant, f.metric, f.unit)
			for _, c := range contenders {
				x, ok := cells[f][c]
				switch {
				case !ok:
					b.WriteString(" – |")
				case x.N > 1 && x.Min != x.Max:
					fmt.Fprintf(&b, " %s (%s–%s) |", num(x.Median), num(x.Min), num(x.Max))
				default:
					fmt.Fprintf(&b, " %s |", num(x.Median))
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num prints a figure with precision that suits its size.
func num(f float64) string {
	switch a := max(f, -f); {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	default:
		return fmt.Sprintf("%.3g", f)
	}
}

func filter(rows []results.Row, keep func(results.Row) bool) []results.Row {
	var out []results.Row
	for _, x := range rows {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func unique(rows []results.Row, f func(results.Row) string) []string {
	var out []string
	for _, x := range rows {
		if v := f(x); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
