package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/analysis"
	"github.com/monolock/monolock-bench/bench/output/report"
	"github.com/monolock/monolock-bench/bench/results"
)

// agreementMarkdown writes whether the runs reach the same verdicts: the
// count of decision rows and capability cells that agree, each decision
// row's pick per run, and every flipped cell with its figure per run.
func agreementMarkdown(p *report.Page, a analysis.Agreement) {
	if len(a.Cells) == 0 && len(a.Picks) == 0 {
		return
	}
	cellsAgree, compared, picksAgree, picks := a.Tally()
	p.Heading("Verdicts across the runs")
	tally := fmt.Sprintf("the decision's pick agrees on %d of %d use cases", picksAgree, picks)
	if compared > 0 {
		tally += fmt.Sprintf(", the capability matrix on %d of the %d cells every run measured", cellsAgree, compared)
	}
	p.Paragraph("Each run judged on its own (runs of one side are not pooled here): "+tally+". A verdict another run flipped is not one to quote from either run alone; “n=1” marks one that rests on one repetition.", false)
	head := slices.Concat([]string{"use case"}, a.Runs, []string{"agrees"})
	var rows [][]string
	for _, pa := range a.Picks {
		row := []string{pa.Title}
		for i := range pa.Picks {
			row = append(row, pickText(pa, i))
		}
		rows = append(rows, append(row, yesNo(pa.Agrees())))
	}
	p.Table(head, len(head), rows)
	var flips [][]string
	var some []string
	for _, c := range a.Cells {
		if !c.Compared() {
			some = append(some, c.Contender+": "+analysis.ShortLabel(c.Label))
		}
		if !c.Flipped() {
			continue
		}
		row := []string{c.Contender, analysis.ShortLabel(c.Label)}
		for _, v := range c.Verdicts {
			row = append(row, verdictText(v))
		}
		flips = append(flips, row)
	}
	switch {
	case len(flips) > 0:
		p.Paragraph("Capability cells that flipped:", false)
		head = slices.Concat([]string{"lock", "capability"}, a.Runs)
		p.Table(head, len(head), flips)
	case compared > 0:
		p.Paragraph("No capability cell flipped.", false)
	}
	if len(some) > 0 {
		p.Paragraph(fmt.Sprintf("Measured in some of the runs only, not compared (%d): %s.", len(some), strings.Join(some, "; ")), false)
	}
}

// pickText is one run's pick of a use case: the locks it supports, then
// the deciding figure, in that run, of every lock some run supports.
func pickText(pa analysis.PickAgreement, i int) string {
	if !pa.Decided[i] {
		return "not decided (none of its figures measured)"
	}
	pk := pa.Picks[i]
	text := "none"
	if len(pk.Supports) > 0 {
		text = strings.Join(pk.Supports, ", ")
	}
	if pk.Deciding == nil {
		return text
	}
	var named []string
	for j, other := range pa.Picks {
		if pa.Decided[j] {
			for _, c := range other.Supports {
				if !slices.Contains(named, c) {
					named = append(named, c)
				}
			}
		}
	}
	var figures []string
	for _, c := range named {
		k := slices.IndexFunc(pk.Deciding.Entries, func(e analysis.Entry) bool { return e.Contender == c })
		if k < 0 {
			figures = append(figures, c+" not ranked (a required capability not shown)")
			continue
		}
		figures = append(figures, c+" "+entryText(pk.Deciding.Entries[k]))
	}
	return fmt.Sprintf("%s (%s: %s)", text, pk.Deciding.Text, strings.Join(figures, "; "))
}

// entryText is a ranking entry's figure: its median with n and its place,
// or why it failed.
func entryText(e analysis.Entry) string {
	if e.Failed != "" {
		return e.Failed
	}
	if len(e.Values) == 0 {
		return "–"
	}
	text := fmt.Sprintf("%s (n=%d", results.Format(analysis.Median(e.Values), e.Unit), len(e.Values))
	if e.Noise {
		return text + ", noise)"
	}
	return fmt.Sprintf("%s, place %d)", text, e.Place)
}

// verdictText is a capability verdict as a cell: its mark, what it
// counts and the repetitions it rests on.
func verdictText(v analysis.Verdict) string {
	cell := cmp.Or(v.Cell, v.Short) // as the report's capability matrix says it
	var text string
	switch v.Mark {
	case analysis.Holds:
		text = "✓ " + cell
	case analysis.Fails:
		text = "✗ " + cell
	case analysis.NotComparable, analysis.NoEvidence:
		text = cell
	default:
		return "– not measured"
	}
	if n := len(v.Entry.Values); n > 0 {
		text += fmt.Sprintf(" (n=%d)", n)
	}
	return text
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
