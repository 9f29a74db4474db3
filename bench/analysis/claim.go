package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// ClaimVerdict is the measured outcome of a claim.
type ClaimVerdict string

// Claim verdicts. With the usual spread rule a claim holds or fails only when
// every repetition agrees, so the spread across repetitions decides, not
// the luck of one run; data that is missing or straddles the threshold
// gives ClaimInconclusive.
const (
	ClaimHolds        ClaimVerdict = "holds"
	ClaimFails        ClaimVerdict = "fails"
	ClaimInconclusive ClaimVerdict = "inconclusive"
)

// Claim is one claim rule of the run (results.ClaimRule) with the verdict
// the run's data gives.
type Claim struct {
	// ID is stable across runs, for scripts: "acquire-latency", ...
	ID string `json:"id"`
	// Claim is the claim as the comparison makes it; Statement is the
	// testable form the data is checked against; Threshold is the rule.
	Claim     string       `json:"claim"`
	Statement string       `json:"statement"`
	Threshold string       `json:"threshold"`
	Verdict   ClaimVerdict `json:"verdict"`
	// Kind is whose statement it is (results.ClaimPromise, ClaimOther,
	// ClaimTarget; "" is a promise).
	Kind string `json:"kind,omitempty"`
	// Evidence gives the numbers behind the verdict, or what is missing.
	Evidence string `json:"evidence"`
	// Scenario is the rule's scenario; Subject the contender the claim is
	// about.
	Scenario string `json:"scenario"`
	Subject  string `json:"subject"`
	// Figure is the subject's figure, its median ("2.11 s"), for a verdict
	// that quotes it; "" when the run lacks it.
	Figure string `json:"figure,omitempty"`
}

// Claims evaluates the run's claim rules (results.Results.Claims) against
// its figures, in the order of the rules, but for the targets of a
// network profile (ClaimRule.Network), which Evaluate checks against that
// profile's run.
func (run *Run) Claims() []Claim {
	out := make([]Claim, 0, len(run.r.Claims))
	for _, rule := range run.r.Claims {
		if rule.Network == "" {
			out = append(out, run.Evaluate(rule))
		}
	}
	return out
}

// span is a figure's median and spread across repetitions, with the
// repetitions' values when it was measured (a bound is not).
type span struct {
	median, lo, hi float64
	n              int
	vals           []float64
}

func (s span) String() string { return s.in("") }

// in prints the span with a unit after the median (results.Span): "121.8
// µs (114.1–127.0, n=3)", a yes/no figure as "1 of 2".
func (s span) in(unit string) string {
	vals := s.vals
	if vals == nil {
		vals = slices.Repeat([]float64{s.median}, max(s.n, 1))
	}
	return results.Span(vals, unit)
}

// spanOf aggregates per-repetition values like results.Summarize.
func spanOf(vals []float64) span {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	return span{results.Median(v), v[0], v[n-1], n, vals}
}

// Evaluate judges one rule against the run's figures; see
// results.ClaimRule for its fields.
func (run *Run) Evaluate(rule results.ClaimRule) Claim {
	c := Claim{ID: rule.ID, Claim: rule.Claim, Statement: rule.Statement, Threshold: rule.Threshold, Verdict: ClaimInconclusive, Kind: rule.Kind, Scenario: rule.Scenario, Subject: rule.Subject}
	compared := []string{rule.Subject}
	if rule.Than.Contender != "" {
		compared = append(compared, rule.Than.Contender)
	}
	v := run.pickVariant(rule, compared)
	if v == "" {
		c.Evidence = fmt.Sprintf("not measured in this run: no %s %s %s for %s",
			rule.Scenario, rule.Variant, run.metricLabel(rule.Scenario, rule.Metric), strings.Join(compared, " and "))
		return c
	}
	s, unit, _ := run.quantity(rule, rule.Subject, v)
	if s.n > 0 {
		c.Figure = results.Format(s.median, unit)
	}
	if rule.Label != "" {
		c.Evidence = fmt.Sprintf("%s %s: %s %s", rule.Subject, v, s, rule.Label)
	} else {
		c.Evidence = fmt.Sprintf("%s %s %s %s", rule.Subject, v, run.metricLabel(rule.Scenario, rule.Metric), s.in(unit))
	}

	factor := rule.Than.Factor
	if factor == 0 {
		factor = 1
	}
	var bound span
	switch {
	case rule.Than.Contender != "" || rule.Than.Variant != "":
		br := boundRule(rule)
		who, bv := rule.Than.Contender, v
		if who == "" {
			who = rule.Subject
		}
		if rule.Than.Variant != "" {
			bv = rule.Than.Variant
		}
		var ok bool
		if bound, _, ok = run.quantity(br, who, bv); !ok {
			c.Evidence += fmt.Sprintf("; not measured in this run: no %s %s %s for %s", rule.Scenario, bv, run.metricLabel(rule.Scenario, br.Metric), who)
			return c
		}
		if bv != v {
			who += " " + bv
		}
		if br.Metric != rule.Metric {
			who += " " + br.Metric
		}
		if _, beaten := run.BeatsFloor(rule.Scenario, v, rule.Metric, rule.Subject, rule.Than.Contender); beaten && bv == v && br.Metric == rule.Metric {
			c.Evidence += fmt.Sprintf("; %s %s, beaten in every repetition: no ratio, for a floor the lock beats is no floor in this run", who, bound.in(unit))
			return c
		}
		c.Evidence += fmt.Sprintf("; %s %s: ratio %s", who, bound.in(unit), results.Ratio(s.median, bound.median))
		if lo, hi := s.lo/bound.hi, s.hi/bound.lo; lo != hi && bound.lo > 0 {
			c.Evidence += fmt.Sprintf(" (spread %s–%s)", results.Ratio(lo, 1), results.Ratio(hi, 1))
		}
	case rule.Than.Parameter != "":
		d, ok := run.Duration(rule.Subject, rule.Than.Parameter)
		if !ok {
			c.Evidence = fmt.Sprintf("the run recorded no %s for %s", rule.Than.Parameter, rule.Subject)
			return c
		}
		per, ok := nanoseconds[unit]
		if !ok {
			c.Evidence += fmt.Sprintf("; the %s (%s) cannot be compared with a figure in %q", rule.Than.Parameter, d, unit)
			return c
		}
		b := float64(d.Nanoseconds()) / per
		bound = span{b, b, b, 1, nil}
		if rule.Op != results.Within {
			c.Evidence += fmt.Sprintf("; %s %s, limit %s", rule.Than.Parameter, d, results.Format(factor*b, unit))
		}
	case rule.Than.RTTs > 0:
		per, ok := nanoseconds[unit]
		rtt := 0.0
		if len(run.r.Networks) == 1 {
			rtt = run.r.Networks[0].MeasuredRTTUS()
		}
		if !ok || rtt <= 0 {
			c.Evidence += "; no measured round trip to compare with"
			return c
		}
		b := rule.Than.RTTs * rtt * 1e3 / per
		bound = span{b, b, b, 1, nil}
		c.Evidence += fmt.Sprintf("; measured RTT %s: %s RTT", results.Format(rtt, "us"), results.Ratio(s.median*per/1e3, rtt))
	default:
		bound = span{rule.Than.Value, rule.Than.Value, rule.Than.Value, 1, nil}
	}
	c.Verdict = judgeClaim(rule.Op, rule.Spread, s, bound, factor)
	if defect := run.unreachable(rule, v, unit, factor*bound.hi); defect != "" {
		c.Verdict, c.Evidence = ClaimInconclusive, c.Evidence+"; "+defect
	}

	for _, q := range rule.Quote {
		c.Evidence += run.quote(rule, q, v)
	}
	for _, g := range rule.Guards {
		gr := rule
		gr.Metric, gr.Derive = g.Metric, nil
		if x, gu, ok := run.quantity(gr, rule.Subject, v); ok && x.hi > 0 {
			c.Verdict = ClaimFails
			label := g.Label
			if label == "" {
				label = run.metricLabel(rule.Scenario, g.Metric)
			}
			c.Evidence += fmt.Sprintf("; %s %s", label, x.in(gu))
		}
	}
	return c
}

// judgeClaim compares the figure s with bound by op under the spread rule: with
// SpreadRange the whole range of s against the whole range of bound must
// satisfy op for Holds and violate it for Fails; with SpreadMedian the
// medians decide. Factor scales the bound (AtMost, AtLeast) or is the band
// (Within).
func judgeClaim(op, spread string, s, bound span, factor float64) ClaimVerdict {
	if spread == results.SpreadMedian {
		s = span{s.median, s.median, s.median, s.n, nil}
		bound = span{bound.median, bound.median, bound.median, bound.n, nil}
	}
	var holds, fails bool
	switch op {
	case results.AtMost:
		holds, fails = s.hi <= factor*bound.lo, s.lo > factor*bound.hi
	case results.AtLeast:
		holds, fails = s.lo >= factor*bound.hi, s.hi < factor*bound.lo
	case results.Within:
		holds = s.lo*factor >= bound.hi && s.hi <= factor*bound.lo
		fails = s.hi*factor < bound.lo || s.lo > factor*bound.hi
	}
	switch {
	case holds:
		return ClaimHolds
	case fails:
		return ClaimFails
	}
	return ClaimInconclusive
}

// quote prints one further figure of a claim's evidence, or nothing when
// the run lacks it.
func (run *Run) quote(rule results.ClaimRule, q results.ClaimQuote, variant string) string {
	qr := rule
	if q.Metric != "" && q.Metric != rule.Metric {
		qr.Metric, qr.Derive, qr.Label = q.Metric, nil, ""
	}
	contender := q.Contender
	if contender == "" {
		contender = rule.Subject
	}
	s, unit, ok := run.quantity(qr, contender, variant)
	switch {
	case !ok:
		return ""
	case contender == rule.Subject:
		return fmt.Sprintf(", %s %s", run.metricLabel(rule.Scenario, qr.Metric), s.in(unit))
	case qr.Label != "":
		return fmt.Sprintf("; %s %s", contender, s)
	}
	return fmt.Sprintf("; %s %s %s", contender, run.metricLabel(rule.Scenario, qr.Metric), s.in(unit))
}

// pickVariant returns the variant a rule judges: its Variant, or among the
// run's variants matching its pattern, the first (or the one with the
// largest number) where every compared contender has the figure; "" when
// none has.
func (run *Run) pickVariant(rule results.ClaimRule, compared []string) string {
	best, bestN := "", math.Inf(-1)
	for _, v := range run.variants(rule.Scenario) {
		if !matchVariant(rule.Variant, v) {
			continue
		}
		all := true
		for _, c := range compared {
			r := rule
			if c != rule.Subject {
				r = boundRule(rule)
			}
			if _, _, ok := run.quantity(r, c, v); !ok {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if rule.Pick != results.PickLargest {
			return v
		}
		if n := float64(run.params(rule.Scenario, v).Size()); n > bestN {
			best, bestN = v, n
		}
	}
	return best
}

// boundRule is rule with the figure its bound contender is judged by:
// Than.Metric when set, else the rule's own.
func boundRule(rule results.ClaimRule) results.ClaimRule {
	if rule.Than.Metric != "" && rule.Than.Metric != rule.Metric {
		rule.Metric, rule.Derive, rule.Label = rule.Than.Metric, nil, ""
	}
	return rule
}

// matchVariant matches a variant against a pattern with at most one "*"
// (any non-empty text).
func matchVariant(pattern, v string) bool {
	prefix, suffix, wild := strings.Cut(pattern, "*")
	if !wild {
		return v == pattern
	}
	return len(v) > len(prefix)+len(suffix) && strings.HasPrefix(v, prefix) && strings.HasSuffix(v, suffix)
}

// quantity collects a rule's figure for one contender and variant, one
// value per repetition: the metric, else the rule's derivation. The unit
// is the metric's ("" when derived).
func (run *Run) quantity(rule results.ClaimRule, contender, variant string) (span, string, bool) {
	var vals []float64
	unit := ""
	for _, x := range run.raws[rawKey{rule.Scenario, contender, variant}] {
		if m, ok := x.Metric(rule.Metric); ok {
			vals, unit = append(vals, m.Value), m.Unit
			continue
		}
		if rule.Derive != nil {
			if v, ok := derive(x, *rule.Derive); ok {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) == 0 {
		return span{}, "", false
	}
	return spanOf(vals), unit, true
}

// derive computes a derivation for one repetition; see results.Derivation.
func derive(x results.Raw, d results.Derivation) (float64, bool) {
	v := 1.0
	for _, name := range d.Times {
		t, ok := x.Figure(name)
		if !ok {
			return 0, false
		}
		v *= t
	}
	per, ok := x.Figure(d.Per)
	if !ok || per == 0 {
		return 0, false
	}
	v /= per
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// unreachable returns why a claim's limit cannot be tested, or "": an
// at-most limit at or above the grant bound of the trial it judges (a 6 s
// claim behind a 5 s give-up) can never fail by a trial whose waiter
// never got the lock, so it is a defect of the claim, not a verdict.
func (run *Run) unreachable(rule results.ClaimRule, variant, unit string, limit float64) string {
	p := run.params(rule.Scenario, variant)
	per, ok := nanoseconds[unit]
	if rule.Op != results.AtMost || p.GrantBound == nil || !ok {
		return ""
	}
	lease, ok := run.Duration(rule.Subject, "lease")
	if !ok {
		return ""
	}
	b := p.GrantBound.At(lease)
	if bound := float64(b.Nanoseconds()) / per; limit >= bound {
		return fmt.Sprintf("defect of the claim: its limit %s is not below the trial's own grant bound %s, so a trial can never show it exceeded", results.Format(limit, unit), b)
	}
	return ""
}

// Whose is whose statement the claim is: its Kind, results.ClaimPromise
// when the rule names none.
func (c Claim) Whose() string {
	if c.Kind == "" {
		return results.ClaimPromise
	}
	return c.Kind
}

// Contradicted reports whether the run contradicts a statement about
// another system: it saw something else than that system's
// documentation says. That is no failure of the project's lock.
func (c Claim) Contradicted() bool {
	return c.Verdict == ClaimFails && c.Whose() == results.ClaimOther
}

// Failed reports whether the claim is a failure a reader must weigh: a
// promise or a target that fails, never a statement about another system.
func (c Claim) Failed() bool {
	return c.Verdict == ClaimFails && c.Whose() != results.ClaimOther
}

// TallyClaims counts the verdicts of claims.
func TallyClaims(claims []Claim) (holds, fails, inconclusive int) {
	for _, c := range claims {
		switch c.Verdict {
		case ClaimHolds:
			holds++
		case ClaimFails:
			fails++
		default:
			inconclusive++
		}
	}
	return holds, fails, inconclusive
}

// Decided reports whether the run decides the claim: it holds or fails.
func (c Claim) Decided() bool { return c.Verdict != ClaimInconclusive }

// A ClaimAcross is one claim checked under each of several runs (a
// sweep's network profiles), in the runs' order.
type ClaimAcross struct {
	Each []Claim
}

// ClaimsAcross checks the claims of runs that share their claim rules
// (one run's profiles) under each, one ClaimAcross a claim, in the rules'
// order.
func ClaimsAcross(runs []*Run) []ClaimAcross {
	if len(runs) == 0 {
		return nil
	}
	per := make([][]Claim, len(runs))
	for i, run := range runs {
		per[i] = run.Claims()
	}
	out := make([]ClaimAcross, len(per[0]))
	for j := range out {
		for i := range runs {
			out[j].Each = append(out[j].Each, per[i][j])
		}
	}
	return out
}

// Decided reports whether some run decides the claim; a run that leaves
// it inconclusive (not measured under that profile) changes nothing.
func (c ClaimAcross) Decided() bool { return slices.ContainsFunc(c.Each, Claim.Decided) }

// Differs reports whether the runs that decide the claim disagree.
func (c ClaimAcross) Differs() bool {
	var first ClaimVerdict
	for _, x := range c.Each {
		if !x.Decided() {
			continue
		}
		if first == "" {
			first = x.Verdict
		}
		if x.Verdict != first {
			return true
		}
	}
	return false
}
