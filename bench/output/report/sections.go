package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
)

func (f *figures) scenarioSection(d *document, s string) error {
	d.h2(f.title(s))
	f.findings(d, s, f.claims)
	full := func(d *document) {
		if set := f.r.Parameters.Scenario[s]; len(set) > 0 {
			d.p("Parameters: " + settingsText(set) + ".")
		}
		f.figureTables(d, s)
	}
	if len(f.scenarioContenders(s)) == 0 {
		d.p("No figures: this scenario did not run to completion for any contender.")
		d.details(f.title(s)+": parameters and why it was not measured", full)
		return nil
	}
	var err error
	switch s {
	case "latency":
		err = f.latencySection(d)
	case "throughput":
		err = f.throughputSection(d)
	case "handover":
		err = f.handoverSection(d)
	case "fairness":
		err = f.fairnessSection(d)
	case "safety":
		err = f.safetySection(d)
	case "failover":
		err = f.failoverSection(d)
	case "scale":
		err = f.scaleSection(d)
	case "chaos":
		err = f.chaosSection(d)
	case workloadScenario:
		err = f.workloadSection(d)
	}
	if err != nil {
		return err
	}
	d.details(f.title(s)+": parameters and all figures", full)
	return nil
}

// settingsText prints settings as "key value" pairs in key order. A
// value of several lines (a workload file's text) is a document, not a
// parameter: it is named, and left to results.json and its section.
func settingsText(set results.Settings) string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts, documents []string
	for _, k := range keys {
		if strings.Contains(set[k], "\n") {
			documents = append(documents, k)
			continue
		}
		parts = append(parts, k+" "+set[k])
	}
	if len(documents) > 0 {
		parts = append(parts, "in results.json: "+strings.Join(documents, ", "))
	}
	return strings.Join(parts, "; ")
}

func (f *figures) latencySection(d *document) error {
	for _, v := range f.variants("latency") {
		if f.params("latency", v).Load == results.LoadOpen {
			continue // charted against the offered rate below
		}
		svg, err := f.percentileChart("Acquire latency by percentile ("+v+")", "latency", v, "acquire", "acquire latency (us, log scale)", "us")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "latency-" + anchor(v), caption: "Acquire latency distribution (the CDF drawn as a percentile plot, tails to the right), " + v + ", all repetitions merged from the HdrHistograms; floors dashed.", svg: svg})
		}
		line, _ := f.ranked("latency", v, "acquire_p50", f.locks("latency"), false)
		if line == "" {
			continue
		}
		text := fmt.Sprintf("Reading (%s): median acquire, fastest lock first: %s.", v, line)
		if fl := f.listFigures("latency", v, "acquire_p50", f.floors("latency")); fl != "" {
			text += " The floors, which do the same round trips with no lock logic, take " + fl + ": what a lock takes above the floor of its kind is its own cost."
		}
		if below := f.belowFloor("latency", v, "acquire_p50"); below != "" {
			text += " " + below
		}
		if tail := f.listFigures("latency", v, "acquire_p999", f.locks("latency")); tail != "" {
			text += " The p99.9 tail: " + tail + "."
		}
		d.p(text)
	}
	f.latencyNoise(d)
	return f.openLoopSection(d)
}

func (f *figures) throughputSection(d *document) error {
	svg, err := f.throughputChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "throughput", caption: "Completed acquire+release cycles per second against workers on distinct keys (hold 0); error bars span the repetitions; floors dashed.", svg: svg})
	}
	var text []string
	for _, c := range f.scenarioContenders("throughput") {
		best, bestW := 0.0, 0
		for _, v := range f.variantsWhere("throughput", closedDistinct) {
			w := f.params("throughput", v).Workers
			if x, ok := f.row("throughput", c, v, "cycles_per_sec"); ok && x.Median > best {
				best, bestW = x.Median, w
			}
		}
		if bestW > 0 {
			text = append(text, fmt.Sprintf("%s peaks at %s/s with %d workers", c, results.Num(best), bestW))
		}
	}
	if len(text) == 0 {
		return nil
	}
	s := "Reading: " + strings.Join(text, "; ") + "."
	if v, w := f.mostWorkers(); v != "" {
		if line, _ := f.ranked("throughput", v, "cycles_per_sec", f.locks("throughput"), true); line != "" {
			s += fmt.Sprintf(" At %d workers, most cycles first: %s.", w, line)
		}
		if fl := f.listFigures("throughput", v, "cycles_per_sec", f.floors("throughput")); fl != "" {
			s += " The floors reach " + fl + ", the ceiling for a lock of their kind on this path."
		}
		if cpu := f.listFigures("throughput", v, "server_cpu_ms_per_1k", f.locks("throughput")); cpu != "" {
			s += " Coordinator CPU per 1,000 locks: " + cpu + "."
		}
	}
	for _, v := range f.variantsWhere("throughput", func(p results.VariantParams) bool { return p.Contended }) {
		if line := f.listFigures("throughput", v, "cycles_per_sec", f.locks("throughput")); line != "" {
			s += fmt.Sprintf(" On a small shared key set (%s), where claims wait for each other: %s.", v, line)
		}
	}
	d.p(s)
	return nil
}

func (f *figures) handoverSection(d *document) error {
	svg, err := f.handoverChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "handover", caption: "Time from the holder's stop (release, SIGKILL, SIGSTOP) to the waiter's grant: bars are the p50 of the trials, whiskers the slowest trial (medians across repetitions), log scale. A dashed outline without fill is a failure, not a figure: the waiter never got the lock, drawn at the trial's bound (never > bound).", svg: svg})
	}
	var parts []string
	for _, mode := range f.variants("handover") {
		line := f.listFigures("handover", mode, "p50", f.locks("handover"))
		if line == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("after %s the median handover is %s", modeText(mode), line))
	}
	if len(parts) == 0 {
		return nil
	}
	s := "Reading: " + strings.Join(parts, "; ") + "."
	if l, ok := f.duration("", "lease"); ok {
		s += fmt.Sprintf(" The lease (or TTL) is %s for every contender: a handover close to it means the waiter had to wait for expiry.", l)
	}
	// Why crash and host-loss differ.
	s += " A SIGKILL on the same host lets the kernel close the killed holder's sockets (a FIN or a reset reaches the server at once), so crash is a process crash, not a machine loss; host-loss drops the holder's packets silently (an embedded fault proxy), as a lost machine or a cut cable would."
	for _, c := range f.locks("handover") {
		var failed []string
		for _, mode := range f.variants("handover") {
			if x, ok := f.row("handover", c, mode, "failed"); ok && x.Max > 0 {
				failed = append(failed, fmt.Sprintf("%s %s", mode, results.Num(x.Median)))
			}
		}
		if len(failed) > 0 {
			s += fmt.Sprintf(" %s had failed trials (median per repetition): %s.", c, strings.Join(failed, ", "))
		}
	}
	d.p(s)
	return nil
}

func modeText(mode string) string {
	switch mode {
	case "graceful":
		return "a controlled release"
	case "crash":
		return "a crash (SIGKILL)"
	case "freeze":
		return "a freeze (SIGSTOP)"
	case "host-loss":
		return "a host loss (packets silently dropped)"
	}
	return mode
}

func (f *figures) fairnessSection(d *document) error {
	for _, v := range f.variants("fairness") {
		svg, err := f.grantsChart(v)
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "fairness-grants-" + anchor(v), caption: "Grants each client got on the hot lock (" + v + "), summed over the repetitions: equal bars are fair.", svg: svg})
		}
		svg, err = f.percentileChart("Wait for the hot lock by percentile ("+v+")", "fairness", v, "wait", "wait (ms, log scale)", "ms")
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "fairness-wait-" + anchor(v), caption: "Wait from request to grant on the hot lock (" + v + "), all clients and repetitions merged.", svg: svg})
		}
		f.clientTable(d, v)
		var parts []string
		for _, c := range f.locks("fairness") {
			var fs []string
			if x, ok := f.row("fairness", c, v, "jain_index"); ok {
				fs = append(fs, "Jain index "+results.Num(x.Median))
			}
			if x, ok := f.row("fairness", c, v, "fifo_inversions_per_1k"); ok {
				fs = append(fs, results.Num(x.Median)+" FIFO inversions per 1,000 grants")
			}
			if x, ok := f.row("fairness", c, v, "wait_p99"); ok {
				fs = append(fs, "wait p99 "+results.Format(x.Median, x.Unit))
			}
			if x, ok := f.row("fairness", c, v, "utilisation"); ok {
				fs = append(fs, fmt.Sprintf("lock held %.0f%% of the time", 100*x.Median))
			}
			if x, ok := f.row("fairness", c, v, "server_ops_per_sec"); ok {
				fs = append(fs, "server load "+results.Format(x.Median, x.Unit))
			}
			if len(fs) > 0 {
				parts = append(parts, c+": "+strings.Join(fs, ", "))
			}
		}
		if len(parts) > 0 {
			d.p(fmt.Sprintf("Reading (%s): %s. A Jain index of 1 means every client got the same number of grants; an inversion is a grant that overtook an earlier pending request; server load counts the commands the coordinator handled per second while clients waited.", v, strings.Join(parts, "; ")))
		}
	}
	return nil
}

// maxClientColumns keeps the per-client table within a 1280-px page.
const maxClientColumns = 8

// clientTable shows the per-client grants of a fairness variant (summed
// over the repetitions) with each client's share: a row per contender, a
// column per client.
func (f *figures) clientTable(d *document, variant string) {
	var clients []string
	grants := map[string]map[string]int64{}
	totals := map[string]int64{}
	for _, c := range f.scenarioContenders("fairness") {
		for _, raw := range f.raws("fairness", c, variant) {
			for _, cl := range raw.Clients {
				g, ok := cl.Counts["grants"]
				if !ok {
					continue
				}
				if !slices.Contains(clients, cl.ID) {
					clients = append(clients, cl.ID)
				}
				if grants[c] == nil {
					grants[c] = map[string]int64{}
				}
				grants[c][cl.ID] += g
				totals[c] += g
			}
		}
	}
	if len(clients) == 0 {
		return
	}
	var cols []column
	for _, id := range clients {
		cols = append(cols, column{head: id, value: func(c string) (string, bool) {
			g, ok := grants[c][id]
			if !ok || totals[c] == 0 {
				return "", false
			}
			return fmt.Sprintf("%d (%.1f%%)", g, 100*float64(g)/float64(totals[c])), true
		}})
	}
	d.p(fmt.Sprintf("Grants per client (%s, all repetitions) and each client's share; with %d clients an equal share is %.1f%%.", variant, len(clients), 100/float64(len(clients))))
	for len(cols) > 0 {
		n := min(len(cols), maxClientColumns)
		if t, ok := f.contenderTable(f.scenarioContenders("fairness"), cols[:n]); ok {
			d.add(t)
		}
		cols = cols[n:]
	}
}
