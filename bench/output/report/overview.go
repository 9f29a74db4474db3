package report

import (
	"fmt"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/results"
)

func (f *figures) intro(d *document) {
	r := f.r
	if r.Partial {
		d.add(paragraph{text: "Partial run: " + r.PartialReason + ". Figures cover only the steps that finished; missing figures are shown as –.", strong: true})
	}
	e := r.Environment
	d.p(fmt.Sprintf("Measured on %s (%d cores, GOMAXPROCS %d, %s/%s), backend %s, network path: %s. Run started %s, finished %s.",
		orUnknown(e.CPUModel), e.Cores, e.GOMAXPROCS, e.OS, e.Arch, e.Backend, orUnknown(e.NetworkPath),
		r.StartedAt.UTC().Format("2006-01-02 15:04:05Z"), finished(r)))
	d.p(fmt.Sprintf("Every figure is the median across its repetitions (n; %s), with the min–max across repetitions in parentheses when they differ. "+
		"Lower is better for latencies, handover times, waits, CPU and coordinator load; higher is better for throughput and the Jain index. "+
		"All of this report is generated from results.json (monolock-bench report DIR/results.json re-renders it); nothing in it is written by hand.",
		f.repetitionsText()))
	f.contenderList(d)
}

// contenderList names the contenders, grouped by family, with what each
// is.
func (f *figures) contenderList(d *document) {
	t, ok := f.contenderTable(f.contenders, []column{{head: "what it is", value: func(c string) (string, bool) {
		i := f.info[c]
		text := i.Label
		if i.ContendedOnly {
			text = strings.TrimPrefix(text+"; runs only where workers share keys", "; ")
		}
		return text, text != ""
	}}})
	if !ok {
		return
	}
	t.leftAligned = true
	d.p("Contenders, by family:")
	d.add(t)
}

func finished(r *results.Results) string {
	if r.FinishedAt.IsZero() {
		return "not recorded"
	}
	return r.FinishedAt.UTC().Format("2006-01-02 15:04:05Z")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// glanceGroup is one table of the at-a-glance section: the figures a user
// decides on, with the variants this run has.
type glanceGroup struct {
	title string
	cols  []column
}

func (f *figures) glanceGroups() []glanceGroup {
	// unit names what a rate counts ("locks/s"); times and sizes take
	// the unit that suits the column's figures.
	col := func(head, scenario, variant, metric, unit string) column {
		c := f.figureColumn(head, scenario, variant, metric)
		if strings.HasSuffix(unit, "/s") {
			if h, ok := strings.CutSuffix(c.head, " (/s)"); ok {
				c.head = h + " (" + unit + ")"
			}
		}
		return c
	}
	speed := []column{
		col("acquire p50, 1 worker", "latency", "w1", "acquire_p50", "us"),
		col("acquire p99, 1 worker", "latency", "w1", "acquire_p99", "us"),
		col("acquire + release p50, 1 worker", "latency", "w1", "cycle_p50", "us"),
	}
	var cpu []column
	if v, w := f.mostWorkers(); v != "" {
		speed = append(speed,
			col(fmt.Sprintf("short locks, %d workers, distinct keys", w), "throughput", v, "cycles_per_sec", "locks/s"),
			col(fmt.Sprintf("cycle p99, %d workers", w), "throughput", v, "cycle_p99", "us"))
		cpu = append(cpu,
			col(fmt.Sprintf("coordinator CPU per 1,000 locks, %d workers", w), "throughput", v, "server_cpu_ms_per_1k", "ms"),
			col(fmt.Sprintf("client CPU per 1,000 locks, %d workers", w), "throughput", v, "client_cpu_ms_per_1k", "ms"))
	}
	for _, v := range f.variantsWhere("throughput", func(p results.VariantParams) bool { return p.Contended }) {
		w := f.params("throughput", v).Workers
		speed = append(speed, col(fmt.Sprintf("short locks, %d workers, shared keys", w), "throughput", v, "cycles_per_sec", "locks/s"))
		break
	}
	groups := []glanceGroup{
		{"Speed", speed},
		{"Handover (the waiter's grant after the holder stops)", []column{
			col("after release, p50", "handover", "graceful", "p50", "ms"),
			col("after crash, p50", "handover", "crash", "p50", "ms"),
			col("after crash, max", "handover", "crash", "max", "ms"),
			col("after freeze, p50", "handover", "freeze", "p50", "ms"),
		}},
	}
	if v := f.firstVariant("fairness"); v != "" {
		groups = append(groups, glanceGroup{"Contention (" + v + ")", []column{
			col("Jain index (1 = equal shares)", "fairness", v, "jain_index", ""),
			col("FIFO inversions per 1,000 grants", "fairness", v, "fifo_inversions_per_1k", ""),
			col("wait p99", "fairness", v, "wait_p99", "ms"),
			col("coordinator load", "fairness", v, "server_ops_per_sec", "commands/s"),
		}})
	}
	return append(groups, glanceGroup{"CPU", cpu})
}

func (f *figures) atAGlance(d *document) {
	d.h2("At a glance")
	shown := false
	for _, g := range f.glanceGroups() {
		t, ok := f.contenderTable(f.contenders, g.cols)
		if !ok {
			continue
		}
		d.p(g.title + ":")
		d.add(t)
		shown = true
	}
	if !shown {
		d.p("No figures: none of the decision figures was measured in this run.")
		return
	}
	d.p("– means not measured in this run (floors take part only where they frame the physics, in latency and throughput). A floor is a baseline contender with no lock logic: the best any lock of its kind can do on this machine and path.")
}

func (f *figures) claimsSection(d *document, claims []Claim) {
	d.h2("Claims checked")
	if len(claims) == 0 {
		d.p("This run records no claims to check.")
		return
	}
	d.p("Each claim the contenders' comparison pages make, as a testable statement with the verdict this run's data gives. A verdict is holds or fails only when every repetition agrees with respect to the stated threshold; when the spread straddles the threshold, or the data is missing, it is inconclusive.")
	t := table{head: []string{"claim", "testable statement", "verdict", "measured", "threshold"}, leftAligned: true, cards: true}
	open := table{head: []string{"claim", "verdict"}, leftAligned: true}
	for _, c := range claims {
		t.rows = append(t.rows, []cell{
			{text: c.Claim}, {text: c.Statement}, {text: string(c.Verdict), class: string(c.Verdict)},
			{text: c.Evidence}, {text: c.Threshold},
		})
		if c.Verdict != Holds {
			open.rows = append(open.rows, []cell{{text: c.Claim}, {text: string(c.Verdict), class: string(c.Verdict)}})
		}
	}
	holds, fails, inc := tally(claims)
	d.p(fmt.Sprintf("%d of %d claims hold, %d fail, %d are inconclusive in this run.", holds, len(claims), fails, inc))
	if len(open.rows) > 0 {
		d.p("The claims that do not hold or that this run cannot decide:")
		d.add(open)
	}
	d.details("Claims checked: every statement, figure and threshold", func(d *document) { f.claimTables(d, claims) })
}

// tally counts the verdicts of claims.
func tally(claims []Claim) (holds, fails, inconclusive int) {
	for _, c := range claims {
		switch c.Verdict {
		case Holds:
			holds++
		case Fails:
			fails++
		default:
			inconclusive++
		}
	}
	return holds, fails, inconclusive
}
