package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/results"
)

// The chaos section: the analysis's figures per lock (double holders,
// stale writes, locks not freed, faults by kind), the faults per
// contender with Wilson intervals,
// the first violation of each kind with its excerpt of history, a
// timeline per contender, and links to the histories and porcupine's
// visualisations. Everything is read from the raw records' chaos data
// (results.Chaos); the figure tables follow (figureTables).

func (f *figures) chaosSection(d *document) error {
	runs := f.a.ChaosRecords()
	if len(runs) == 0 {
		return nil
	}
	seeds := map[uint64]bool{}
	for _, r := range runs {
		seeds[r.Chaos.Seed] = true
	}
	seedText := "seed " + strings.Join(slicesMap(slices.Sorted(maps.Keys(seeds)), func(s uint64) string { return fmt.Sprint(s) }), ", ")
	d.p("Every lock ran the same seeded schedule of faults (" + seedText + "). " + chaosSchedule(runs) + " Each row rests on one run; its faults applied are its trials. " +
		"Running double holders are the lock's failure; a holder frozen by a pause overlaps under any lease lock, and only a fencing token refuses its late writes.")
	f.soakLink(d)
	d.h3("Figures")
	d.add(f.chaosTable())
	f.soakBounds(d, runs)
	d.details("Chaos: the faults and violation rates, the stores, the faults on holders, the first violation of each kind, the histories", func(d *document) {
		d.p(serverRecordNote(f.a.Chaos()))
		d.p(fmt.Sprint(len(runs[0].Chaos.Timeline.Lanes)) + " client processes contended for one lock and, under it, read and wrote a register and incremented a counter in a fenced and an unfenced store. " +
			"A client fault strikes the client that holds the lock at the fault's start. Double holders are counted by the earlier holder.")
		d.add(f.chaosChecks(runs))
		d.p("Per kind: faults with a violation blamed on them (faults on the clients involved or on a server only), of the faults applied (Wilson 95% interval).")
		d.add(f.chaosFaults(runs))
		d.p("valid means no checker found a violation; invalid that one did (the first of each kind is shown below, with the history around it); unknown that a checker could not decide. " +
			"The register's linearizability checks the store and the recording against the store's model; what a lock gets wrong shows as double holders, stale writes the store accepted, and lost increments. " +
			"A stale write is one invoked after another client's newer grant; a fenced store still accepts one that reaches it before the new holder's first operation (it has not seen the newer token yet), which costs nothing here: the new holder's fenced read then sees it.")
		d.add(f.chaosStores(runs))
		d.p("A kind the contender or its backend cannot do is skipped, with the reason. A violation is blamed on the faults active in its cause window that act on a server or on a client it involves (an overlap under a frozen holder: the pause alone; another overlap: up to the later grant, faults on a server from the earlier grant and on either holder from its acquire; a stale write: up to the write, on a server from the writer's grant, on the writer and the newer grant's holder from their acquires; a lost increment: from the first of the two increments to the second's completion, on either client or a server); a fault on another client is never blamed. Faults that overlap share a violation. An increment is judged stale when its write left (write_t), in histories recorded before that field at its invocation: there a paused read-then-write can lose an increment with no stale write counted.")
		if skips := chaosSkips(runs); len(skips) > 0 {
			d.add(list{items: skips})
		}
		if items := chaosBlamed(runs); len(items) > 0 {
			d.p("Each running double holder, by whom the servers' own record lays it on, and what the record showed (times from the start of the lock's history):")
			d.add(list{items: items})
		}
		if t, ok := chaosHolderFaults(runs); ok {
			d.p("Client faults that struck the client holding the lock, and what became of the lock: kept through the fault means no other client was granted it before the fault ended (safe, but every waiter waited); the time to the next grant runs from the fault's start.")
			d.add(t)
		}
		for _, r := range runs {
			f.chaosViolations(d, r)
		}
		if items := chaosLinks(runs); len(items) > 0 {
			d.p("The histories (JSON lines, the format in bench/README.md) and porcupine's visualisations of registers that were not linearizable:")
			d.add(links{items: items})
		}
		var notes []string
		for _, r := range runs {
			for _, n := range r.Chaos.Notes {
				notes = append(notes, r.Contender+": "+n)
			}
		}
		if len(notes) > 0 {
			d.add(list{items: notes})
		}
	})
	// The timelines are looked up, not read: one per lock, in the appendix.
	d.details("Chaos: a timeline per lock", func(d *document) {
		d.p("One lane per client; light bars are acquires (from the request to the grant or the failure), dark bars holds (to the release), orange holds ended by the lost notice; shaded spans are the faults (labelled by their number and kind; a client fault also outlines its client's lane).")
		for _, r := range runs {
			d.add(chart{
				name:    "chaos-timeline-" + r.Contender,
				caption: r.Contender + ": the chaos run's timeline.",
				svg:     f.chaosTimeline(r),
			})
		}
	})
	return nil
}

func slicesMap[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// validCell is a checker's verdict as a cell, coloured as the claims
// are.
func validCell(v string) cell {
	switch v {
	case "valid":
		return cell{text: "valid", class: "holds"}
	case "invalid":
		return cell{text: "invalid", class: "fails"}
	}
	return cell{text: v, class: "inconclusive"}
}

// chaosTable lays out the analysis's chaos rows: a column per violation
// the checkers count, then the faults applied by kind.
func (f *figures) chaosTable() table {
	t := table{head: []string{"lock", "running double holders", "frozen-holder overlaps", "stale writes accepted behind the fence",
		"lock not freed during a fault on its holder", "holder writes refused by the fence", "token-order violations", "writes after the loss notice",
		"running double holders by the servers' record: server granted early / client learned late / both / unclassified", "faults applied"},
		leftAligned: true} // words in most cells: they wrap
	for _, r := range f.a.Chaos() {
		kept := "no fault on the holder"
		if r.HolderFaults > 0 {
			kept = fmt.Sprintf("%d of %d", r.Kept, r.HolderFaults)
			if r.Never > 0 {
				kept += fmt.Sprintf(" (%d never freed)", r.Never)
			}
		}
		faults := results.Num(float64(r.Applied()))
		if len(r.Faults) > 0 {
			faults += ": " + strings.Join(slicesMap(r.Faults, func(k analysis.KindCount) string { return fmt.Sprintf("%d %s", k.N, faultLabel[k.Kind]) }), ", ")
		}
		t.rows = append(t.rows, []cell{{text: r.Contender}, tallyCell(r.Running), tallyCell(r.Frozen), tallyCell(r.StaleFenced),
			{text: kept}, tallyCell(r.RefusedHolder), tallyCell(r.TokenOrder), tallyCell(r.AfterLost), blameCell(r), {text: faults}})
	}
	return t
}

// blameCell is the running double holders by class, or why there are no
// classes.
func blameCell(r analysis.ChaosRow) cell {
	if r.ServerEarly.Missing != "" {
		return cell{text: r.ServerEarly.Missing}
	}
	return cell{text: strings.Join(slicesMap([]analysis.Tally{r.ServerEarly, r.ClientLate, r.Both, r.Unclassified}, func(t analysis.Tally) string { return results.Num(float64(t.N)) }), " / ")}
}

// serverRecordNote names the locks whose overlaps the servers' record
// could classify, and says why the others' could not, each reason once.
func serverRecordNote(rows []analysis.ChaosRow) string {
	var with []string
	var reasons []string
	without := map[string][]string{}
	for _, r := range rows {
		switch {
		case r.NoServerRecord == "":
			with = append(with, r.Contender)
		case without[r.NoServerRecord] == nil:
			reasons = append(reasons, r.NoServerRecord)
			fallthrough
		default:
			without[r.NoServerRecord] = append(without[r.NoServerRecord], r.Contender)
		}
	}
	text := "Running double holders are classified by the servers' own record of their grants and lease ends (server events in the history) for: "
	if len(with) == 0 {
		text += "no lock"
	} else {
		text += strings.Join(with, ", ")
	}
	if len(reasons) > 0 {
		text += ". Not classified: " + strings.Join(slicesMap(reasons, func(why string) string { return strings.Join(without[why], ", ") + " (" + why + ")" }), "; ")
	}
	return text + "."
}

// chaosBlamed lists each classified running overlap of every lock.
func chaosBlamed(runs []analysis.ChaosRecord) []string {
	var items []string
	for _, r := range runs {
		if b := r.Chaos.Verdict.Blame; b != nil {
			for _, o := range b.Overlaps {
				items = append(items, fmt.Sprintf("%s, %s ms: %s granted while %s ran: %s (%s)", r.Contender, results.Num(o.AtMS), o.Second, o.First, o.Blame, o.Why))
			}
		}
	}
	return items
}

// tallyCell is a count, or why there is none.
func tallyCell(t analysis.Tally) cell {
	if t.Missing != "" {
		return cell{text: t.Missing}
	}
	return cell{text: results.Num(float64(t.N))}
}

// chaosChecks are the run's size and its overlaps in time, per lock, for
// the appendix.
func (f *figures) chaosChecks(runs []analysis.ChaosRecord) table {
	t := table{head: []string{"contender", "operations", "holds", "double holders", "time with two holders", "longest gap between grants"}}
	for _, r := range runs {
		v := r.Chaos.Verdict
		t.rows = append(t.rows, []cell{{text: r.Contender}, {text: results.Num(float64(v.Operations))}, {text: results.Num(float64(v.Holds))},
			{text: results.Num(float64(v.Exclusion.Count))}, {text: results.Format(v.OverlapMS, "ms")}, {text: results.Format(v.GrantGapMaxMS, "ms")}})
	}
	return t
}

func (f *figures) chaosStores(runs []analysis.ChaosRecord) table {
	t := table{head: []string{"contender", "store", ":valid?", "register linearizable", "stale writes accepted", "stale writes rejected", "unknown outcome", "writes accepted", "lost increments", "acknowledged", "final counter"}, labels: 2}
	for _, r := range runs {
		for _, s := range r.Chaos.Verdict.Stores {
			if s.Fenced && !r.Chaos.Tokens {
				t.rows = append(t.rows, []cell{{text: r.Contender}, {text: s.Store}, {text: "no token"}, {text: "—"}, {text: "—"},
					{text: fmt.Sprint(s.Rejected)}, {text: fmt.Sprint(s.UnknownOutcome)}, {text: fmt.Sprintf("%d of %d", s.Accepted, s.Writes)}, {text: "—"}, {text: "—"}, {text: "—"}})
				continue
			}
			final := "not read"
			if s.Final != nil {
				final = fmt.Sprint(*s.Final)
			}
			t.rows = append(t.rows, []cell{{text: r.Contender}, {text: s.Store}, validCell(s.Valid), validCell(s.Linearizable.Valid),
				{text: fmt.Sprint(s.StaleWrites.Count)}, {text: fmt.Sprint(s.Rejected)}, {text: fmt.Sprint(s.UnknownOutcome)},
				{text: fmt.Sprintf("%d of %d", s.Accepted, s.Writes)}, {text: fmt.Sprint(s.LostUpdates.Count)}, {text: fmt.Sprint(s.Acknowledged)}, {text: final}})
		}
	}
	return t
}

// rateText prints k/n with the Wilson interval in percent: "0/5 (≤ 43.4%)"
// at zero, "2/5 (11.8–76.9%)" else.
func rateText(r results.ChaosRate) string {
	if r.Trials == 0 {
		return "no faults"
	}
	if r.Violations == 0 {
		return fmt.Sprintf("0/%d (≤ %.1f%%)", r.Trials, 100*r.Hi)
	}
	return fmt.Sprintf("%d/%d (%.1f–%.1f%%)", r.Violations, r.Trials, 100*r.Lo, 100*r.Hi)
}

// chaosKindsOf returns the fault kinds the runs name, in chaosKinds'
// order, others after.
func chaosKindsOf(runs []analysis.ChaosRecord) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for k := range r.Chaos.Verdict.Faults {
			seen[k] = true
		}
		for k := range r.Chaos.Verdict.Skipped {
			seen[k] = true
		}
	}
	var kinds []string
	for _, k := range analysis.ChaosKinds {
		if seen[k] {
			kinds = append(kinds, k)
			delete(seen, k)
		}
	}
	return append(kinds, slices.Sorted(maps.Keys(seen))...)
}

func (f *figures) chaosFaults(runs []analysis.ChaosRecord) table {
	kinds := chaosKindsOf(runs)
	t := table{head: append([]string{"contender", "faults applied", "any violation"}, kinds...)}
	t.head = append(t.head, "failed to apply")
	for _, r := range runs {
		v := r.Chaos.Verdict
		applied := 0
		for _, n := range v.Faults {
			applied += n
		}
		row := []cell{{text: r.Contender}, {text: fmt.Sprint(applied)}, {text: rateText(v.Rate)}}
		for _, k := range kinds {
			rate, ok := v.RateByKind[k]
			switch {
			case ok:
				row = append(row, cell{text: rateText(rate)})
			case v.Skipped[k] > 0:
				row = append(row, cell{text: fmt.Sprintf("skipped (%d)", v.Skipped[k])})
			default:
				row = append(row, cell{text: "—"})
			}
		}
		row = append(row, cell{text: fmt.Sprint(v.Failed)})
		t.rows = append(t.rows, row)
	}
	return t
}

// chaosSkips lists why kinds were skipped, once per contender and kind.
func chaosSkips(runs []analysis.ChaosRecord) []string {
	var out []string
	for _, r := range runs {
		for _, k := range slices.Sorted(maps.Keys(r.Chaos.Verdict.SkipReasons)) {
			out = append(out, fmt.Sprintf("%s, %s skipped: %s", r.Contender, k, r.Chaos.Verdict.SkipReasons[k]))
		}
	}
	return out
}

// chaosViolations shows a contender's first violation of each kind with
// its excerpt of history.
func (f *figures) chaosViolations(d *document, r analysis.ChaosRecord) {
	type found struct {
		kind string
		v    *results.ChaosViolation
	}
	var all []found
	first := r.Chaos.Verdict.Exclusion.First
	if first != nil {
		all = append(all, found{"double holders", first})
	}
	if v := r.Chaos.Verdict.FirstRunning; v != nil && (first == nil || v.AtMS != first.AtMS) {
		all = append(all, found{"double holders, the earlier holder running", v})
	}
	for _, s := range r.Chaos.Verdict.Stores {
		if s.Fenced && !r.Chaos.Tokens {
			continue
		}
		if v := s.StaleWrites.First; v != nil {
			all = append(all, found{"stale write accepted by the " + s.Store + " store", v})
		}
		if v := s.LostUpdates.First; v != nil {
			all = append(all, found{"lost increment in the " + s.Store + " store", v})
		}
		if v := s.Linearizable.First; v != nil {
			all = append(all, found{"the " + s.Store + " register not linearizable", v})
		}
	}
	if len(all) == 0 {
		return
	}
	d.h3(r.Contender + ": first violation of each kind")
	for _, x := range all {
		text := fmt.Sprintf("%s, at %.1f s: %s.", x.kind, x.v.AtMS/1000, x.v.What)
		if len(x.v.Faults) > 0 {
			text += " Blamed on: " + strings.Join(slicesMap(x.v.Faults, func(id int64) string { return fmt.Sprintf("#%d %s", id, faultKind(r.Chaos, id)) }), ", ") + "."
		} else {
			text += " No fault on a server or on the clients involved was active in its cause window."
		}
		d.p(text)
		t := table{head: []string{"", "t (ms)", "process", "event (history line)"}, leftAligned: true}
		for _, l := range x.v.Excerpt {
			if l.Elided > 0 {
				t.rows = append(t.rows, []cell{{text: ""}, {text: "…"}, {text: ""}, {text: fmt.Sprintf("(%d events left out)", l.Elided)}})
			}
			mark := ""
			if l.Mark {
				mark = "▶"
			}
			// a history line is one long token: it may break anywhere
			t.rows = append(t.rows, []cell{{text: mark}, {text: fmt.Sprintf("%.1f", l.AtMS)}, {text: l.Process}, {text: l.Event, class: "code"}})
		}
		d.add(t)
	}
}

// faultKind names a fault of the run by its id.
func faultKind(c *results.Chaos, id int64) string {
	for _, f := range c.Timeline.Faults {
		if f.ID == id {
			if f.Target != "" {
				return f.Kind + " on " + f.Target
			}
			return f.Kind
		}
	}
	return "?"
}

func chaosLinks(runs []analysis.ChaosRecord) []link {
	var out []link
	for _, r := range runs {
		if r.Chaos.History != "" {
			out = append(out, link{text: r.Contender + ": history", href: r.Chaos.History})
		}
		for _, s := range r.Chaos.Verdict.Stores {
			if s.Visualization != "" {
				out = append(out, link{text: r.Contender + ": " + s.Store + " register, porcupine visualisation", href: s.Visualization})
			}
		}
	}
	return out
}

// Timeline geometry, in SVG user units.
const (
	tlWidth  = 960.0
	tlLeft   = 44.0 // lane labels
	tlRight  = 12.0
	tlLane   = 18.0
	tlBottom = 58.0 // axis and legends
	// The fault labels above the lanes: at least tlLabelRows rows of
	// tlLabelRow px; tlCharWidth is what a character of the 10-px labels
	// takes at most, roughly.
	tlLabelRows = 3
	tlLabelRow  = 11.0
	tlCharWidth = 6.2
)

// faultLabel is a kind's short label on the timeline.
var faultLabel = map[string]string{
	"client-pause": "pause", "client-host-loss": "host loss", "client-partition": "partition",
	"server-kill": "kill", "server-pause": "server pause", "clock-step": "clock step",
}

// faultFill is the shading of each kind (translucent, so overlaps show).
var faultFill = map[string]string{
	"client-pause": "#7b3fa0", "client-host-loss": "#c8322d", "client-partition": "#e08a00",
	"server-kill": "#333333", "server-pause": "#1f5fbf", "clock-step": "#2e8b57",
}

// chaosHolderFaults tabulates, per contender and client-fault kind, the
// faults that struck the holder: how many, how many kept the lock through
// the fault, and the time to the next grant (median and largest).
func chaosHolderFaults(runs []analysis.ChaosRecord) (table, bool) {
	t := table{head: []string{"contender", "fault", "on the holder", "lock kept through the fault", "next grant after (median)", "next grant after (max)"}, labels: 2}
	for _, r := range runs {
		byKind := map[string][]results.ChaosHolderFault{}
		for _, hf := range r.Chaos.Verdict.HolderFaults {
			byKind[hf.Kind] = append(byKind[hf.Kind], hf)
		}
		for _, k := range analysis.ChaosKinds {
			hfs := byKind[k]
			if len(hfs) == 0 {
				continue
			}
			kept := 0
			var waits []float64
			never := 0
			for _, hf := range hfs {
				if hf.Kept {
					kept++
				}
				if hf.HandoverMS < 0 {
					never++
					continue
				}
				waits = append(waits, hf.HandoverMS)
			}
			median, most := "none", "none"
			if len(waits) > 0 {
				slices.Sort(waits)
				show := results.DisplayFor("ms", waits...)
				median, most = show.Format(waits[(len(waits)-1)/2]), show.Format(waits[len(waits)-1])
			}
			if never > 0 {
				most += fmt.Sprintf(" (%d never)", never)
			}
			t.rows = append(t.rows, []cell{{text: r.Contender}, {text: k}, {text: fmt.Sprint(len(hfs))}, {text: fmt.Sprint(kept)}, {text: median}, {text: most}})
		}
	}
	return t, len(t.rows) > 0
}
