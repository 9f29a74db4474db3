package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// Summary writes the table of medians of one run as plain Markdown, for
// the terminal and CI logs at the end of a run: the run's header (id,
// partial flag, environment, notes) and one table per scenario, a row per
// variant and metric, a column per contender, each cell the median across
// repetitions with its min–max. It is built in the report's document
// model and rendered by its Markdown renderer.
func Summary(w io.Writer, r *results.Results) error {
	d := &document{title: "monolock-bench run " + r.RunID}
	if r.Partial {
		d.add(paragraph{text: "Partial run: " + r.PartialReason, strong: true})
	}
	d.add(list{items: environmentItems(r)})
	f := &figures{r: r, a: analysis.New(r)}
	for _, scenario := range r.Parameters.Scenarios {
		sf := f.a.ScenarioFigures(scenario)
		if len(sf.Figures) == 0 {
			continue
		}
		d.h2(scenario)
		d.p("Median across repetitions (min–max).")
		t := table{head: append([]string{"variant", "metric", "unit"}, sf.Contenders...), labels: 3}
		for _, x := range sf.Figures {
			show := rowDisplay(slices.Collect(maps.Values(x.ByContender))...)
			row := []cell{{text: x.Variant}, {text: x.Label}, {text: show.Unit}}
			for _, c := range sf.Contenders {
				text := "–"
				if r, ok := x.ByContender[c]; ok {
					text = f.spread(r, show)
				}
				row = append(row, cell{text: text})
			}
			t.rows = append(t.rows, row)
		}
		d.add(t)
	}
	if len(r.Notes) > 0 {
		d.h2("Notes")
		d.add(list{items: r.Notes})
	}
	_, err := w.Write(d.markdown())
	return err
}

// environmentItems describes the machine and the run in short lines.
func environmentItems(r *results.Results) []string {
	e := r.Environment
	items := []string{
		fmt.Sprintf("machine: %s, %d cores (GOMAXPROCS %d), %s/%s, kernel %s, %s",
			e.CPUModel, e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Kernel, e.GoVersion),
		fmt.Sprintf("backend: %s; network path: %s", e.Backend, e.NetworkPath),
	}
	if len(e.Sysctls) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(e.Sysctls)) {
			kv = append(kv, k+"="+e.Sysctls[k])
		}
		items = append(items, "sysctls: "+strings.Join(kv, ", "))
	}
	var versions []string
	for _, s := range e.Servers {
		if v := s.Role + " " + s.Version; s.Version != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	if len(versions) > 0 {
		items = append(items, "server versions: "+strings.Join(versions, ", "))
	}
	if e.DockerVersion != "" {
		items = append(items, "Docker engine "+e.DockerVersion)
	}
	for _, im := range e.Images {
		items = append(items, fmt.Sprintf("image %s: %s (%s)", im.Role, im.Ref, im.Source))
	}
	return append(items, fmt.Sprintf("repetitions: %d; quick: %v; started %s, finished %s",
		r.Parameters.Repetitions, r.Parameters.Quick, r.StartedAt.Format("2006-01-02 15:04:05Z07:00"), r.FinishedAt.Format("15:04:05Z07:00")))
}
