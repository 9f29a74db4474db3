package analysis

import (
	"slices"
)

// An Agreement says whether several runs reach the same verdicts: per
// cell of the capability matrix (a lock and a capability) and per use
// case's pick. A verdict a second run flips is one a reader should not
// quote from either run alone.
type Agreement struct {
	// Runs are the runs' ids, in the order given to Agree.
	Runs []string
	// Cells are the capability cells some run measured, of the locks
	// every run has and the capabilities every run declares and some
	// run's matrix shows, in the first run's order.
	Cells []CellAgreement
	// Picks are the use cases some run decides, in UseCases' order.
	Picks []PickAgreement
}

// A CellAgreement is one lock's verdict on one capability in each run.
type CellAgreement struct {
	Contender, ID string
	// Label is the capability's text as the first run declares it.
	Label string
	// Verdicts are one per run, in Agreement.Runs' order.
	Verdicts []Verdict
}

// Compared reports whether every run has a verdict for the cell (it is
// measured in each): a cell some run did not measure (a capped variant, a
// contender left out) is no agreement and no flip.
func (c CellAgreement) Compared() bool {
	return !slices.ContainsFunc(c.Verdicts, func(v Verdict) bool { return v.Mark == NotMeasured })
}

// Agrees reports whether every run measured the cell and gave it the
// same mark.
func (c CellAgreement) Agrees() bool {
	return c.Compared() && !slices.ContainsFunc(c.Verdicts, func(v Verdict) bool { return v.Mark != c.Verdicts[0].Mark })
}

// Flipped reports whether every run measured the cell and some gave it
// another mark than the others.
func (c CellAgreement) Flipped() bool { return c.Compared() && !c.Agrees() }

// A PickAgreement is one use case's pick in each run.
type PickAgreement struct {
	UseCase
	// Picks are one per run, in Agreement.Runs' order; Decided says
	// whether that run measured any of the use case's figures (a Pick
	// is zero where not).
	Picks   []Pick
	Decided []bool
}

// Agrees reports whether every run decided the use case and supports
// the same locks.
func (p PickAgreement) Agrees() bool {
	for i, pk := range p.Picks {
		if !p.Decided[i] || !sameSet(pk.Supports, p.Picks[0].Supports) {
			return false
		}
	}
	return true
}

// Agree compares the verdicts of runs (two or more): every capability
// cell they can all judge and every use case.
func Agree(runs []*Run) Agreement {
	var a Agreement
	for _, run := range runs {
		a.Runs = append(a.Runs, run.r.RunID)
	}
	if len(runs) == 0 {
		return a
	}
	first := runs[0]
	var ids []string
	for _, run := range runs {
		for _, id := range run.MatrixIDs() {
			if !slices.Contains(ids, id) && everyRun(runs, func(r *Run) bool { return r.Declared(id) }) {
				ids = append(ids, id)
			}
		}
	}
	for _, c := range first.locks {
		if !everyRun(runs, func(r *Run) bool { return slices.Contains(r.locks, c) }) {
			continue
		}
		for _, id := range ids {
			cell := CellAgreement{Contender: c, ID: id, Label: first.Label(id)}
			for _, run := range runs {
				cell.Verdicts = append(cell.Verdicts, run.Capability(c, id))
			}
			if slices.ContainsFunc(cell.Verdicts, func(v Verdict) bool { return v.Mark != NotMeasured }) {
				a.Cells = append(a.Cells, cell)
			}
		}
	}
	for _, u := range UseCases {
		pa := PickAgreement{UseCase: u}
		for _, run := range runs {
			p, ok := run.Decide(u)
			pa.Picks, pa.Decided = append(pa.Picks, p), append(pa.Decided, ok)
		}
		if slices.Contains(pa.Decided, true) {
			a.Picks = append(a.Picks, pa)
		}
	}
	return a
}

// Tally counts the cells every run measured (compared) and those of
// them that agree, and the picks that agree of all.
func (a Agreement) Tally() (cellsAgree, compared, picksAgree, picks int) {
	for _, c := range a.Cells {
		if c.Compared() {
			compared++
		}
		if c.Agrees() {
			cellsAgree++
		}
	}
	for _, p := range a.Picks {
		if p.Agrees() {
			picksAgree++
		}
	}
	return cellsAgree, compared, picksAgree, len(a.Picks)
}

// everyRun reports whether ok holds for every run.
func everyRun(runs []*Run, ok func(*Run) bool) bool {
	return !slices.ContainsFunc(runs, func(r *Run) bool { return !ok(r) })
}

// sameSet reports whether a and b hold the same names, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
