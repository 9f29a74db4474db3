package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// Pool joins the runs of one side of a comparison into one run: their
// repetitions side by side, renumbered, as if one run had made them all,
// with the summary recomputed over them. The first run gives the
// environment and parameters (repetitions summed); contenders, claims and
// scenario declarations are the union, first seen first. Pool does not
// modify its arguments.
//
// Runs of two builds made one after the other carry the machine's drift
// between them in every delta; runs made alternately (A B A B …) and
// pooled per side cancel it, so that only the builds' difference is left.
func Pool(runs []*results.Results) *results.Results {
	if len(runs) == 1 {
		return runs[0]
	}
	first := runs[0]
	p := &results.Results{
		SchemaVersion: first.SchemaVersion,
		StartedAt:     first.StartedAt,
		FinishedAt:    first.FinishedAt,
		Environment:   first.Environment,
		Parameters:    first.Parameters,
	}
	p.Parameters.Repetitions = 0
	var ids, partial []string
	reps := map[[3]string]int{} // scenario, variant, contender → repetitions so far
	for _, r := range runs {
		ids = append(ids, r.RunID)
		if r.StartedAt.Before(p.StartedAt) {
			p.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(p.FinishedAt) {
			p.FinishedAt = r.FinishedAt
		}
		p.Parameters.Repetitions += r.Parameters.Repetitions
		if r.Partial {
			p.Partial = true
			partial = append(partial, r.RunID+": "+r.PartialReason)
		}
		for _, raw := range r.Raw {
			k := [3]string{raw.Scenario, raw.Variant, raw.Contender}
			reps[k]++
			raw.Repetition = reps[k]
			p.Raw = append(p.Raw, raw)
		}
		p.Notes = append(p.Notes, r.Notes...)
		p.Contenders = appendNew(p.Contenders, r.Contenders, func(c results.ContenderInfo) string { return c.Name })
		p.Claims = appendNew(p.Claims, r.Claims, func(c results.ClaimRule) string { return c.ID })
		p.Scenarios = appendNew(p.Scenarios, r.Scenarios, func(s results.ScenarioInfo) string { return s.Name })
	}
	p.RunID = strings.Join(ids, "+")
	p.PartialReason = strings.Join(partial, "; ")
	p.Summary = results.Summarize(p.Raw)
	for i, row := range p.Summary {
		p.Summary[i].Better = betterOf(runs, row)
	}
	return p
}

// appendNew appends the elements of more whose id is not in to yet.
func appendNew[T any](to, more []T, id func(T) string) []T {
	for _, x := range more {
		if !slices.ContainsFunc(to, func(y T) bool { return id(y) == id(x) }) {
			to = append(to, x)
		}
	}
	return to
}

// betterOf returns the better direction the first of runs whose summary
// gives one gives a row's figure (files without declarations keep it
// there only).
func betterOf(runs []*results.Results, row results.Row) string {
	for _, r := range runs {
		for _, x := range r.Summary {
			if x.Scenario == row.Scenario && x.Variant == row.Variant && x.Contender == row.Contender && x.Metric == row.Metric && x.Better != "" {
				return x.Better
			}
		}
	}
	return ""
}

// sideCaveats says where the runs of one side differ among themselves
// (each against the first), and whether the two sides were run in turns:
// when every run of one side started before the first of the other, the
// machine's drift between them is in every delta.
func sideCaveats(old, new []*results.Results) []string {
	var out []string
	for _, side := range []struct {
		name string
		runs []*results.Results
	}{{"old", old}, {"new", new}} {
		for _, r := range side.runs[1:] {
			for _, c := range caveats(side.runs[0], r) {
				out = append(out, fmt.Sprintf("within the %s runs, %s vs %s: %s", side.name, side.runs[0].RunID, r.RunID, c))
			}
		}
	}
	if allBefore(old, new) || allBefore(new, old) {
		out = append(out, "every run of one side started before every run of the other: the machine's drift between them is in every delta; run the builds in turns (A B A B …) and pool each side to cancel it")
	}
	return out
}

// allBefore says whether every run of a started before the first of b.
func allBefore(a, b []*results.Results) bool {
	for _, x := range a {
		for _, y := range b {
			if !x.StartedAt.Before(y.StartedAt) {
				return false
			}
		}
	}
	return true
}
