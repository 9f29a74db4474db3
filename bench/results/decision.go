package results

import "slices"

// A DecisionFigure is one figure a scenario offers to the report's
// decision section, as data: a capability a reader checks a lock for
// (Op set: the figure of each contender against a threshold gives ✓ or
// ✗), or a figure that ranks the locks for a use case (Op empty). The
// report's use cases name these by ID; the scenario that measures the
// figure declares it (ScenarioInfo.Decides), so no metric name is spelt
// outside its scenario and no contender is named at all.
//
// Example: "frees a frozen holder within one lease" is {ID:
// "frozen-freed", Variant: "freeze", Metric: "max", Op: AtMost, Than:
// {Parameter: "lease", Factor: 1.1}, Fail: [{Metric: "failed", Label:
// "trials without a grant"}]}.
type DecisionFigure struct {
	// ID names the figure for use cases; several scenarios may declare
	// the same ID (a capability measured by the safety trials and by the
	// chaos checkers), see Combine.
	ID string `json:"id"`
	// Text is the capability or figure in words ("frees a frozen holder
	// within one lease").
	Text string `json:"text"`
	// Variant is the variant measured; empty means Where picks one.
	Variant string `json:"variant,omitempty"`
	// Where, when Variant is empty, picks among the variants whose
	// parameters have every non-zero field of Where (Load, Lease,
	// Fault, Contended) the one marked SessionsMax, else the one of the
	// largest size (VariantParams.Size); a contender without the figure
	// there is judged at the next.
	Where *VariantParams `json:"where,omitempty"`
	// Metric is the figure of the variant.
	Metric string `json:"metric"`
	// Counts says, for a capability, what its figure counts in a matrix
	// cell: after the number for a count ("stale writes accepted": "0
	// stale writes accepted"; "held" against a bound of another figure:
	// "19,734 of 19,734 held"), before it for a duration ("no grant for":
	// "no grant for 2.11 s"), so that no cell is a bare number.
	Counts string `json:"counts,omitempty"`
	// Of names the figure a count is out of in a matrix cell, the trials
	// it was counted over: "2 of 2 trials: ..." (Counts after the colon).
	Of string `json:"of,omitempty"`
	// Op is AtMost or AtLeast (a capability) or empty (a ranking
	// figure). A capability judges the worst repetition: its max for
	// AtMost, its min for AtLeast.
	Op   string     `json:"op,omitempty"`
	Than ClaimBound `json:"than,omitempty"`
	// Fail marks the figure failed (✗, ranked last) when a guard metric
	// of the same variant is above zero in any repetition: trials in
	// which the waiter never got the lock within its bound.
	Fail []ClaimGuard `json:"fail,omitempty"`
	// Void marks the figure "did not grant" (✗) when a guard is above
	// zero: the trial never reached the situation it tests, so a zero
	// (no stale write) says nothing good.
	Void []ClaimGuard `json:"void,omitempty"`
	// Without fails the figure with its Label when the contender has no
	// Metric but has Without's metric: a lock without fencing tokens has
	// no fenced-store figure, and that is a ✗, not a gap.
	Without *ClaimGuard `json:"without,omitempty"`
	// Combine says how declarations of one ID join: CombineAll (default,
	// a safety property: any ✗ is ✗) or CombineAny (a capability shown
	// by any one variant: any ✓ is ✓).
	Combine string `json:"combine,omitempty"`
}

// Combine rules of DecisionFigure.Combine.
const (
	CombineAll = "all"
	CombineAny = "any"
)

// fillDecides gives every declared scenario of r that declares no
// decision figures today's, from today; one that declares some today's
// ranking figures (no threshold) under ids it lacks: a ranking only reads
// figures the file has, whereas a capability's threshold is the file's
// own to keep; and a figure recorded before Counts existed today's Counts
// of the same figure.
func (r *Results) fillDecides(today []ScenarioInfo) {
	for i, s := range r.Scenarios {
		for _, t := range today {
			if t.Name != s.Name {
				continue
			}
			if len(s.Decides) == 0 {
				r.Scenarios[i].Decides = t.Decides
				continue
			}
			for j, d := range s.Decides {
				for _, td := range t.Decides {
					if d.Counts == "" && td.ID == d.ID && td.Metric == d.Metric {
						r.Scenarios[i].Decides[j].Counts = td.Counts
					}
				}
			}
			for _, d := range t.Decides {
				if d.Op == "" && !slices.ContainsFunc(s.Decides, func(x DecisionFigure) bool { return x.ID == d.ID }) {
					r.Scenarios[i].Decides = append(r.Scenarios[i].Decides, d)
				}
			}
		}
	}
}
