package report

import (
	"fmt"
	"path"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// method writes the method and caveats: environment, servers and images,
// repetitions and noise, the bench's own overhead, failures, notes and
// every contender setting.
func (f *figures) method(d *document) {
	r := f.r
	e := r.Environment
	d.h2("Method and caveats")
	if r.Partial {
		d.add(paragraph{text: "This run is partial: " + r.PartialReason + ".", strong: true})
	}
	env := []string{
		fmt.Sprintf("Machine: %s, %d cores, GOMAXPROCS %d, %s/%s, kernel %s.", orUnknown(e.CPUModel), e.Cores, e.GOMAXPROCS, e.OS, e.Arch, orUnknown(e.Kernel)),
		fmt.Sprintf("Go %s; Docker engine %s; server versions under Servers and images.", orUnknown(e.GoVersion), orNone(e.DockerVersion)),
		fmt.Sprintf("Backend %s; network path: %s. All servers run in the same backend and are reached the same way.", e.Backend, orUnknown(e.NetworkPath)),
	}
	var servers []string
	for _, s := range e.Servers {
		line := fmt.Sprintf("Server %s at %s", s.Role, s.Address)
		if s.Version != "" {
			line += ", version " + s.Version
		}
		servers = append(servers, line+".")
	}
	for _, im := range e.Images {
		servers = append(servers, fmt.Sprintf("Image %s: %s (%s).", im.Role, im.Ref, im.Source))
	}
	if len(e.Command) > 0 {
		// the program by its name, not by the temporary path of a go run
		// binary
		cmd := append([]string{path.Base(e.Command[0])}, e.Command[1:]...)
		env = append(env, "Command: "+strings.Join(cmd, " "))
	}
	env = append(env, fmt.Sprintf("Repetitions: %d%s; contenders interleaved inside each repetition so that slow drift of the machine spreads over all of them. Each figure's n is the repetitions it took: some variants take fewer where more buy nothing, and a contender more where one of its verdicts flipped between full runs (the settings below say which and why). Timestamps come from the monotonic clock of the bench process.",
		r.Parameters.Repetitions, map[bool]string{true: " (quick mode: shortened durations and counts)", false: ""}[r.Parameters.Quick]))
	d.add(list{items: env})
	d.details("Servers and images", func(d *document) {
		if len(servers) > 0 {
			d.add(list{items: servers})
		}
	})

	d.h3("Noise")
	d.p(f.noiseText())

	d.h3("The bench's own overhead")
	d.p(f.overheadText())

	if fails := f.failureLines(); len(fails) > 0 {
		d.h3("Failures and errors")
		d.p(fmt.Sprintf("%d records of this run counted failed cycles, lost locks or errors.", len(fails)))
		d.details("Failures and errors, per record", func(d *document) { d.add(list{items: fails}) })
	}
	if len(r.Notes) > 0 {
		d.h3("Notes of the run")
		d.add(list{items: r.Notes})
	}
	f.settingsTable(d)
}

func orNone(s string) string {
	if s == "" {
		return "not used"
	}
	return s
}

// noiseText summarises the spread across repetitions: the median relative
// spread (max−min)/median over every figure with more than one repetition,
// and the noisiest figures.
func (f *figures) noiseText() string {
	n := f.a.Noise()
	if n.Figures == 0 {
		return "Each figure comes from a single repetition, so this run says nothing about its own noise: run with --repetitions 3 or more before trusting small differences, and use monolock-bench compare for significance."
	}
	var worst []string
	for _, x := range n.Noisiest {
		worst = append(worst, fmt.Sprintf("%s ±%.0f%%", x.Name, 50*x.Spread))
	}
	return fmt.Sprintf("Across repetitions the figures spread by a median of %.0f%% of their value (max−min over median, %d figures). The noisiest: %s. Differences smaller than the spread are not findings; the claims above take the spread into account.",
		100*n.Median, n.Figures, strings.Join(worst, "; "))
}

// overheadText states what the floors measured, so every lock's figure can
// be read against the cost of the bench and the network path.
func (f *figures) overheadText() string {
	var parts []string
	for _, x := range f.a.OneWorker().AcquireP50.Figures {
		if x.Measured && f.isFloor(x.Contender) {
			parts = append(parts, fmt.Sprintf("%s %s per acquire (p50, 1 worker)", x.Contender, results.Format(x.Row.Median, x.Row.Unit)))
		}
	}
	if v, w := f.a.MostWorkers(); v != "" {
		for _, x := range f.a.Column("throughput", v, results.ThroughputMetrics.CyclesPerSec.Name).Figures {
			if x.Measured && f.isFloor(x.Contender) {
				parts = append(parts, fmt.Sprintf("%s %s cycles/s at %d workers", x.Contender, results.Num(x.Row.Median), w))
			}
		}
	}
	text := "The bench measures around the lock interface (a timing decorator), in the same process as every worker, on a machine shared with the servers. The floors run through exactly the same harness and network path with no lock logic at all, so they show what the bench and the path cost by themselves"
	if len(parts) == 0 {
		return text + "; this run has no floor figures, so the overhead is not known."
	}
	return text + ": " + strings.Join(parts, "; ") + ". A lock cannot do better than its floor on this machine; compare each lock's figure with the floor beside it rather than with another machine's numbers."
}

// failureLines lists failed cycles, lost locks and the errors seen, per
// scenario, variant and contender, from the raw counts.
func (f *figures) failureLines() []string {
	var out []string
	for _, x := range f.a.Troubles() {
		line := fmt.Sprintf("%s/%s/%s repetition %d:", x.Scenario, x.Variant, x.Contender, x.Repetition)
		if len(x.Counts) > 0 {
			var parts []string
			for _, c := range x.Counts {
				parts = append(parts, fmt.Sprintf("%s %d", c.Name, c.N))
			}
			line += " " + strings.Join(parts, ", ") + "."
		}
		if len(x.Errors) > 0 {
			line += " Errors: " + strings.Join(x.Errors, "; ")
		}
		out = append(out, line)
	}
	return out
}

// settingsTable lists every contender parameter, one list item per
// contender (a grid of eleven contenders would not fit a page).
func (f *figures) settingsTable(d *document) {
	set := f.r.Parameters.Contender
	var items []string
	for _, c := range f.contenders {
		if s, ok := set[c]; ok && len(s) > 0 {
			items = append(items, c+": "+settingsText(s)+".")
		}
	}
	if len(items) == 0 {
		return
	}
	d.h3("Contender settings")
	d.p("The lease (or TTL) is the same for every contender; each waiting strategy is a named parameter.")
	d.details("Contender settings, every parameter", func(d *document) { d.add(list{items: items}) })
}
