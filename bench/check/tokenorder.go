package check

import (
	"cmp"
	"fmt"
	"slices"
)

// TokenOrder is the token-order checker's verdict.
type TokenOrder struct {
	Valid Validity `json:"valid"`
	// Grants counts the grants that carried a token.
	Grants int `json:"grants"`
	// Findings counts the grants whose token was not above the token of a
	// grant released before their acquire was invoked.
	Findings
}

// CheckTokenOrder checks that fencing tokens grow with real time: a
// grant's token must be above the token of every grant whose holder had
// invoked its release before the grant's acquire was invoked (that grant
// is certainly the older, whatever the tokens say). A grant that is not
// counts once, against the highest such token, and is attributed to the
// faults on a server between that release and the grant's completion
// (a restart that started the tokens over). Grants whose acquires ran
// concurrently are not compared: real time does not order them. Valid
// when no grant broke the order, also when no grant carried a token.
func CheckTokenOrder(h *History) TokenOrder {
	o := TokenOrder{Valid: Valid, Findings: newFindings()}
	var grants, released []Hold
	for _, hd := range Holds(h) {
		if hd.Token == nil {
			continue
		}
		grants = append(grants, hd)
		if hd.Ended == EndedRelease {
			released = append(released, hd)
		}
	}
	o.Grants = len(grants)
	slices.SortStableFunc(grants, func(a, b Hold) int { return cmp.Compare(a.asked, b.asked) })
	slices.SortStableFunc(released, func(a, b Hold) int { return cmp.Compare(a.To, b.To) })
	var highest *Hold // of the released holds seen so far
	next := 0
	for _, g := range grants {
		for ; next < len(released) && released[next].To < g.asked; next++ {
			if highest == nil || *released[next].Token > *highest.Token {
				highest = &released[next]
			}
		}
		if highest == nil || *g.Token > *highest.Token {
			continue
		}
		what := fmt.Sprintf("%s was granted the lock%s after %s had released its grant%s",
			g.Process, tokenText(g.Token), highest.Process, tokenText(highest.Token))
		blamed := faultsBlamed(h, cause{from: highest.To, to: g.From})
		o.add(h, g.From, blamed, what, highest.fromIdx, highest.toIdx, g.fromIdx)
	}
	if o.Count > 0 {
		o.Valid = Invalid
	}
	return o
}
