package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

func (f *figures) scenarioSection(d *document, s string) error {
	d.h2(f.a.Title(s))
	body := &document{}
	f.findings(body, s, f.claims)
	full := func(d *document) {
		if set := f.r.Parameters.Scenario[s]; len(set) > 0 {
			d.p("Parameters: " + settingsText(set) + ".")
		}
		f.figureTables(d, s)
	}
	if len(f.a.ContendersIn(s)) == 0 {
		body.p("No figures: this scenario did not run to completion for any contender.")
		body.details("Parameters and why it was not measured", full)
		f.withAppendix(d, s, body)
		return nil
	}
	var err error
	switch s {
	case "latency":
		err = f.latencySection(body)
	case "throughput":
		err = f.throughputSection(body)
	case "handover":
		err = f.handoverSection(body)
	case "fairness":
		err = f.fairnessSection(body)
	case "safety":
		err = f.safetySection(body)
	case "failover":
		err = f.failoverSection(body)
	case "scale":
		err = f.scaleSection(body)
	case "chaos":
		err = f.chaosSection(body)
	case workloadScenario:
		f.workloadSummary(body)
		body.details("Workloads: each file's thresholds, chart and ranking", func(d *document) { err = f.workloadSection(d) })
	}
	if err != nil {
		return err
	}
	body.details("Parameters and all figures", full)
	f.withAppendix(d, s, body)
	return nil
}

// withAppendix adds a section's body to d with its details blocks
// gathered into one, at the end: one link to details.md per section, the
// blocks under headings of their own there.
func (f *figures) withAppendix(d *document, s string, body *document) {
	var appendix []block
	for _, b := range body.blocks {
		x, ok := b.(details)
		if !ok {
			d.add(b)
			continue
		}
		appendix = append(appendix, heading{3, x.summary, anchor(f.a.Title(s) + " " + x.summary)})
		appendix = append(appendix, x.blocks...)
	}
	d.details(f.a.Title(s)+": the appendix", func(d *document) { d.blocks = appendix })
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
	var later []string // readings of the other variants, for the appendix
	var moreCharts []chart
	drawn := 0
	for _, rd := range f.a.LatencyReadings() {
		v := rd.Variant
		svg, err := f.percentileChart("Acquire latency by percentile ("+v+")", "latency", v, "acquire", "acquire latency", "us")
		if err != nil {
			return err
		}
		if svg != nil {
			c := chart{name: "latency-" + anchor(v), caption: "Acquire latency distribution (the CDF drawn as a percentile plot, tails to the right), " + v + ", all repetitions merged from the HdrHistograms; floors dashed.", svg: svg}
			if drawn == 0 {
				d.add(c)
			} else {
				moreCharts = append(moreCharts, c)
			}
			drawn++
		}
		line := rankingLine(rd.Ranking)
		if line == "" {
			continue
		}
		text := fmt.Sprintf("Reading (%s): median acquire, fastest lock first: %s.", v, line)
		if fl := f.listFigures("latency", v, results.LatencyMetrics.AcquireP50.Name, f.floors("latency")); fl != "" {
			text += " The floors, which do the same round trips with no lock logic, take " + fl + ": what a lock takes above the floor of its kind is its own cost."
		}
		if below := f.beatsFloor("latency", v, results.LatencyMetrics.AcquireP50.Name); below != "" {
			text += " " + below
		}
		if len(later) == 0 {
			d.p(text)
		}
		if tail := f.listFigures("latency", v, results.LatencyMetrics.AcquireP999.Name, f.locks("latency")); tail != "" {
			text += " The p99.9 tail: " + tail + "."
		}
		later = append(later, text)
	}
	if len(later) > 0 || len(moreCharts) > 0 {
		d.details("Latency: the reading of every worker count, with the p99.9 tail", func(d *document) {
			for _, c := range moreCharts {
				d.add(c)
			}
			for _, text := range later {
				d.p(text)
			}
		})
	}
	f.latencyNoise(d)
	var err error
	d.details("Latency: the open loop, from the due time against the offered rate", func(d *document) { err = f.openLoopSection(d) })
	return err
}

func (f *figures) throughputSection(d *document) error {
	svg, err := f.throughputChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "throughput", caption: "Completed acquire+release cycles per second against workers on distinct keys (hold 0); error bars span the repetitions; floors dashed.", svg: svg})
	}
	if rd := f.a.ThroughputAtMostWorkers(); rd.Variant != "" {
		if line := rankingLine(rd.Ranking); line != "" {
			v := rd.Variant
			s := fmt.Sprintf("Reading: at %d workers, most cycles first: %s.", rd.Workers, line)
			if fl := f.listFigures("throughput", v, results.ThroughputMetrics.CyclesPerSec.Name, f.floors("throughput")); fl != "" {
				s += " The floors reach " + fl + ", the ceiling for a lock of their kind on this path."
			}
			if beaten := f.beatsFloor("throughput", v, results.ThroughputMetrics.CyclesPerSec.Name); beaten != "" {
				s += " " + beaten
			}
			d.p(s)
		}
	}
	d.details("Throughput: each lock's peak, the CPU per lock and the shared key set", f.throughputReading)
	return nil
}

// throughputReading is the appendix's reading of the throughput figures.
func (f *figures) throughputReading(d *document) {
	var text []string
	for _, p := range f.a.ThroughputPeaks() {
		text = append(text, fmt.Sprintf("%s peaks at %s/s with %d workers", p.Contender, results.Num(p.PerSec), p.Workers))
	}
	if len(text) == 0 {
		return
	}
	s := "Peaks: " + strings.Join(text, "; ") + "."
	if v, _ := f.a.MostWorkers(); v != "" {
		if cpu := f.listFigures("throughput", v, results.ThroughputMetrics.ServerCPUMsPer1k.Name, f.locks("throughput")); cpu != "" {
			s += " Coordinator CPU per 1,000 locks: " + cpu + "."
		}
	}
	for _, cv := range f.a.Contended() {
		if line := f.listFigures("throughput", cv.Variant, results.ThroughputMetrics.CyclesPerSec.Name, f.locks("throughput")); line != "" {
			s += fmt.Sprintf(" On a small shared key set (%s), where claims wait for each other: %s.", cv.Variant, line)
		}
	}
	d.p(s)
}

func (f *figures) handoverSection(d *document) error {
	svg, err := f.handoverChart()
	if err != nil {
		return err
	}
	if svg != nil {
		d.add(chart{name: "handover", caption: "Time from the holder's stop (release, SIGKILL, SIGSTOP) to the waiter's grant: bars are the p50 of the trials, whiskers the slowest trial (medians across repetitions), log scale. A dashed outline without fill, labelled never (> bound), is a failure, not a figure: the waiter never got the lock within the trial's bound, and the bar is drawn at it.", svg: svg})
	}
	var cols []column
	for _, mode := range f.a.Variants("handover") {
		cols = append(cols, f.figureColumn(mode, f.a.Column("handover", mode, results.HandoverMetrics.P50.Name)))
	}
	t, ok := f.contenderTable(f.locks("handover"), cols)
	if !ok {
		return nil
	}
	d.p("The median handover (p50 of the trials, median across repetitions) after a controlled release (graceful), a crash (SIGKILL), a freeze (SIGSTOP) and a host loss (packets silently dropped):")
	d.add(t)
	s := ""
	if l, ok := f.duration("", "lease"); ok {
		s += fmt.Sprintf("The lease (or TTL) is %s for every contender: a handover close to it means the waiter had to wait for expiry.", l)
	}
	// Why crash and host-loss differ.
	s += " A SIGKILL on the same host lets the kernel close the killed holder's sockets (a FIN or a reset reaches the server at once), so crash is a process crash, not a machine loss; host-loss drops the holder's packets silently (an embedded fault proxy), as a lost machine or a cut cable would."
	for _, hf := range f.a.HandoverFailed() {
		var failed []string
		for _, m := range hf.Modes {
			failed = append(failed, fmt.Sprintf("%s %s", m.Mode, results.Num(m.Median)))
		}
		s += fmt.Sprintf(" %s had failed trials (median per repetition): %s.", hf.Contender, strings.Join(failed, ", "))
	}
	d.p(s)
	return nil
}

func (f *figures) fairnessSection(d *document) error {
	for _, v := range f.a.Variants("fairness") {
		svg, err := f.grantsChart(v)
		if err != nil {
			return err
		}
		if svg != nil {
			d.add(chart{name: "fairness-grants-" + anchor(v), caption: "Grants each client got on the hot lock (" + v + "), summed over the repetitions: equal bars are fair.", svg: svg})
		}
		wait, err := f.percentileChart("Wait for the hot lock by percentile ("+v+")", "fairness", v, "wait", "wait", "ms")
		if err != nil {
			return err
		}
		f.fairnessTable(d, v)
		d.details("Fairness: the grants of each client ("+v+"), the wait and the reading", func(d *document) {
			if wait != nil {
				d.add(chart{name: "fairness-wait-" + anchor(v), caption: "Wait from request to grant on the hot lock (" + v + "), all clients and repetitions merged.", svg: wait})
			}
			f.clientTable(d, v)
			f.fairnessReading(d, v)
		})
	}
	return nil
}

// fairnessTable is the fairness section's key table for variant v.
func (f *figures) fairnessTable(d *document, v string) {
	var cols []column
	for _, m := range []struct{ head, metric string }{
		{"Jain index", results.FairnessMetrics.JainIndex.Name},
		{"FIFO inversions per 1,000 grants", results.FairnessMetrics.FIFOInversionsPer1k.Name},
		{"wait p99", results.FairnessMetrics.WaitP99.Name},
		{"coordinator commands", results.FairnessMetrics.ServerOpsPerSec.Name},
	} {
		cols = append(cols, f.figureColumn(m.head, f.a.Column("fairness", v, m.metric)))
	}
	if t, ok := f.contenderTable(f.locks("fairness"), cols); ok {
		d.p(fmt.Sprintf("Contention on one hot lock (%s): a Jain index of 1 means every client got the same number of grants; an inversion is a grant that overtook an earlier pending request; the coordinator's commands are counted while clients waited.", v))
		d.add(t)
	}
}

// fairnessReading reads variant v of the fairness scenario in words.
func (f *figures) fairnessReading(d *document, v string) {
	var parts []string
	for _, x := range f.a.FairnessReading(v) {
		var fs []string
		if x.JainIndex != nil {
			fs = append(fs, "Jain index "+results.Num(x.JainIndex.Median))
		}
		if x.Inversions != nil {
			fs = append(fs, results.Num(x.Inversions.Median)+" FIFO inversions per 1,000 grants")
		}
		if x.WaitP99 != nil {
			fs = append(fs, "wait p99 "+results.Format(x.WaitP99.Median, x.WaitP99.Unit))
		}
		if x.Utilisation != nil {
			fs = append(fs, fmt.Sprintf("lock held %.0f%% of the time", 100*x.Utilisation.Median))
		}
		if x.Server != nil {
			fs = append(fs, "server load "+results.Format(x.Server.Median, x.Server.Unit))
		}
		if len(fs) > 0 {
			parts = append(parts, x.Contender+": "+strings.Join(fs, ", "))
		}
	}
	if len(parts) > 0 {
		d.p(fmt.Sprintf("Reading (%s): %s.", v, strings.Join(parts, "; ")))
	}
}

// maxClientColumns keeps the per-client table within a 1280-px page.
const maxClientColumns = 8

// clientTable shows the per-client grants of a fairness variant (summed
// over the repetitions) with each client's share: a row per contender, a
// column per client.
func (f *figures) clientTable(d *document, variant string) {
	g := f.a.FairnessGrants(variant)
	clients, grants, totals := g.Clients, g.Grants, g.Totals
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
		if t, ok := f.contenderTable(f.a.ContendersIn("fairness"), cols[:n]); ok {
			d.add(t)
		}
		cols = cols[n:]
	}
}
