package results

// Kinds of ClaimRule.Kind: whose statement a claim is. A report keeps
// them apart: a promise of the system under test that the run
// contradicts is a failure; a statement about another system that the
// run contradicts is "not observed in this run" (the run did not see what
// that system's documentation says may happen), not a failure among the
// findings; a target is an aim of the project, met or not yet.
const (
	ClaimPromise = "promise" // the system under test promises it
	ClaimOther   = "other"   // a statement about another system (its documentation, its design)
	ClaimTarget  = "target"  // an aim of the project or a check of the method
)

// OfKind returns rules with Kind set to kind where it is empty, for a
// contender package to label its claims at once.
func OfKind(kind string, rules []ClaimRule) []ClaimRule {
	for i := range rules {
		if rules[i].Kind == "" {
			rules[i].Kind = kind
		}
	}
	return rules
}

// fillKinds gives every claim rule of r without a kind the kind of
// today's rule of the same id.
func (r *Results) fillKinds(today []ClaimRule) {
	for i, c := range r.Claims {
		if c.Kind != "" {
			continue
		}
		for _, t := range today {
			if t.ID == c.ID {
				r.Claims[i].Kind = t.Kind
			}
		}
	}
}
