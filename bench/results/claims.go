package results

import (
	"slices"
	"strings"
)

// A ClaimRule is one claim of a comparison page as data: the figure it is
// about, what that figure is compared with, and how the spread across
// repetitions decides the verdict. Contender packages contribute their
// rules; the runner records them in results.json (claim_rules) and the
// report evaluates every rule the same way, knowing no contender.
//
// The figure judged is Metric (or a quantity derived per repetition, see
// Derivation) of the Subject contender in one Variant of Scenario. It is
// compared by Op with Than: another contender's same figure, a run
// parameter of the subject such as its lease, or a constant. Guards make
// the claim fail outright when a guard metric is above zero.
//
// Example: "after a crash the next waiter gets the lock within one lease"
// is {Scenario: "handover", Variant: "crash", Subject: "monolock",
// Metric: "max", Op: AtMost, Than: {Parameter: "lease", Factor: 1.1},
// Spread: SpreadRange, Guards: [{Metric: "failed", Label: "failed
// trials"}]}.
type ClaimRule struct {
	// ID is stable across runs, for scripts and compare ("crash-one-lease").
	ID string `json:"id"`
	// Claim is the claim as the comparison page words it; Statement is
	// the testable form the data is checked against; Threshold states the
	// rule in words (the report prints all three verbatim).
	Claim     string `json:"claim"`
	Statement string `json:"statement"`
	Threshold string `json:"threshold"`
	// Kind is ClaimPromise, ClaimOther or ClaimTarget; "" is read as a
	// promise (files written before it existed: see FillDefaults).
	Kind string `json:"kind,omitempty"`

	Scenario string `json:"scenario"`
	// Network, when set, names the network profile the claim is a target
	// under ("az"): it is checked only against that profile's figures,
	// among the network section's targets, and the claims section leaves
	// it out.
	Network string `json:"network,omitempty"`
	// Variant is the scenario variant. A "*" stands for any text; then Pick
	// chooses among the variants the run has that match and where every
	// contender the rule compares has the figure.
	Variant string `json:"variant"`
	// Pick is PickFirst (default: the first such variant in the run's
	// order) or PickLargest (the one of the largest size by its recorded
	// parameters, VariantParams.Size: the most workers of "distinct-w*").
	Pick    string `json:"pick,omitempty"`
	Subject string `json:"subject"`
	Metric  string `json:"metric"`
	// Derive computes the figure from other figures of the same
	// repetition when a repetition lacks Metric; nil means the metric is
	// required.
	Derive *Derivation `json:"derive,omitempty"`
	// Label names the figure in the evidence ("requests per grant"); empty
	// prints the metric name and its unit.
	Label string `json:"label,omitempty"`

	// Op is AtMost, AtLeast or Within.
	Op   string     `json:"op"`
	Than ClaimBound `json:"than"`
	// Spread is how repetitions decide: SpreadRange (the whole min..max
	// range must satisfy the rule for "holds" and must violate it for
	// "fails", else "inconclusive") or SpreadMedian (the median decides).
	Spread string `json:"spread"`
	// Guards fail the claim whenever one of them is above zero in any
	// repetition of the subject in the same variant.
	Guards []ClaimGuard `json:"guards,omitempty"`
	// Quote lists further figures the evidence shows beside the verdict
	// (other contenders, other metrics of the subject); they do not
	// change it.
	Quote []ClaimQuote `json:"quote,omitempty"`
}

// Operators of ClaimRule.Op.
const (
	// AtMost: figure ≤ Factor × bound.
	AtMost = "at_most"
	// AtLeast: figure ≥ Factor × bound.
	AtLeast = "at_least"
	// Within: bound / Factor ≤ figure ≤ Factor × bound (Factor > 1).
	Within = "within"
)

// Spread rules of ClaimRule.Spread.
const (
	SpreadRange  = "range"
	SpreadMedian = "median"
)

// Picks of ClaimRule.Pick.
const (
	PickFirst   = "first"
	PickLargest = "largest"
)

// ClaimBound is what a claim's figure is compared with: the same figure of
// Contender when set (or its figure Metric, when that is set: a floor's
// lower confidence bound against its lock's upper one), else the subject's run parameter Parameter (a
// duration such as "2s", converted to the figure's unit; when the subject
// records no duration under that name, the first contender in name order
// that does gives it, since parity makes it the same for all), else the
// constant Value in the figure's unit. Variant, when set, takes the
// contender's figure (Contender's, else the subject's own) from that
// variant of the scenario instead of the judged one: the same figure at
// another size (promotion at depth 10k against depth 1). Factor multiplies
// the bound (0 means 1); for Within it is the band, which must exceed 1.
type ClaimBound struct {
	Contender string  `json:"contender,omitempty"`
	Variant   string  `json:"variant,omitempty"`
	Metric    string  `json:"metric,omitempty"`
	Parameter string  `json:"parameter,omitempty"`
	Value     float64 `json:"value,omitempty"`
	// RTTs, when set, bounds a time by that many round trips of the
	// network profile the claim is checked under, as its paths measured
	// them (the median of their RTT p50; NetworkRun.MeasuredRTTUS).
	RTTs   float64 `json:"rtts,omitempty"`
	Factor float64 `json:"factor,omitempty"`
}

// Derivation computes a figure of one repetition as the product of the
// Times figures divided by the Per figure (a zero Per gives no value). A
// figure named here is the repetition's metric of that name, else its
// count, else the sum of its clients' counts; "seconds" is the measured
// span. Example: commands per grant = server_ops_per_sec × seconds /
// grants.
type Derivation struct {
	Times []string `json:"times"`
	Per   string   `json:"per"`
}

// ClaimGuard fails a claim when Metric of the subject, in the judged
// variant, is above zero in any repetition; Label names it in the
// evidence ("failed trials").
type ClaimGuard struct {
	Metric string `json:"metric"`
	Label  string `json:"label,omitempty"`
}

// ClaimQuote is one further figure in a claim's evidence: Metric (empty:
// the rule's figure) of Contender (empty: the subject) in the judged
// variant.
type ClaimQuote struct {
	Contender string `json:"contender,omitempty"`
	Metric    string `json:"metric,omitempty"`
}

// Defaults are what FillDefaults adds to a results file written before
// contender_info, claim_rules, scenario_info and better existed.
type Defaults struct {
	Contenders []ContenderInfo
	Claims     []ClaimRule
	// Scenarios are today's scenario declarations (for the file's quick
	// setting).
	Scenarios []ScenarioInfo
}

// FillDefaults completes an old results file from today's contender and
// scenario tables so that it renders like a new one: when r has no
// contender info it gets the entries of d.Contenders for the contenders it
// ran, and a contender today's table marks as a pitfall is marked so;
// when it has no claim rules, the rules of d.Claims whose subject it
// ran; when it has no scenario info, d.Scenarios' declarations of the
// scenarios it ran, with the variants it ran (a variant today's table no
// longer has keeps its name and no parameters); summary rows without a
// better direction get their declaration's; a note of a
// skipped variant ("scenario/variant/contender skipped: reason", how runs
// recorded it before Raw.Skipped) becomes a record with Skipped. Whatever
// r already has is kept. `monolock-bench report` and `compare` call it
// after Load.
func (r *Results) FillDefaults(d Defaults) {
	r.Notes = slices.DeleteFunc(r.Notes, func(n string) bool {
		at, reason, ok := strings.Cut(n, " skipped: ")
		parts := strings.Split(at, "/")
		if !ok || len(parts) != 3 {
			return false
		}
		r.Raw = append(r.Raw, Raw{Scenario: parts[0], Variant: parts[1], Contender: parts[2], Repetition: 1, Skipped: reason})
		return true
	})
	ran := map[string]bool{}
	for _, c := range r.Parameters.Contenders {
		ran[c] = true
	}
	for _, x := range r.Summary {
		ran[x.Contender] = true
	}
	if len(r.Contenders) == 0 {
		for _, c := range d.Contenders {
			if ran[c.Name] {
				r.Contenders = append(r.Contenders, c)
			}
		}
	}
	// A file written before the pitfall mark existed gets today's: a
	// deployment shown as a misuse stays one.
	for i, c := range r.Contenders {
		if j := slices.IndexFunc(d.Contenders, func(x ContenderInfo) bool { return x.Name == c.Name }); j >= 0 && d.Contenders[j].Pitfall {
			r.Contenders[i].Pitfall = true
		}
	}
	if len(r.Claims) == 0 {
		for _, c := range d.Claims {
			if ran[c.Subject] {
				r.Claims = append(r.Claims, c)
			}
		}
	}
	if len(r.Scenarios) == 0 {
		r.Scenarios = r.declared(d.Scenarios)
	}
	r.fillDecides(d.Scenarios)
	r.fillKinds(d.Claims)
	better := func(scenario, metric string) string {
		s, _ := r.Scenario(scenario)
		m, _ := s.Metric(metric)
		return m.Better
	}
	for i, x := range r.Summary {
		if x.Better == "" {
			r.Summary[i].Better = better(x.Scenario, x.Metric)
		}
	}
}

// declared returns today's declarations of the scenarios r has records
// of, each with the variants r has, in r's order.
func (r *Results) declared(today []ScenarioInfo) []ScenarioInfo {
	var out []ScenarioInfo
	variants := map[string][]string{}
	var order []string
	for _, x := range r.Raw {
		if !slices.Contains(order, x.Scenario) {
			order = append(order, x.Scenario)
		}
		if !slices.Contains(variants[x.Scenario], x.Variant) {
			variants[x.Scenario] = append(variants[x.Scenario], x.Variant)
		}
	}
	for _, name := range order {
		i := slices.IndexFunc(today, func(s ScenarioInfo) bool { return s.Name == name })
		if i < 0 {
			continue
		}
		s := today[i]
		s.Metrics = slices.Clone(s.Metrics)
		s.Variants = nil
		for _, v := range variants[name] {
			p, _ := today[i].Variant(v)
			s.Variants = append(s.Variants, VariantInfo{Name: v, VariantParams: p})
		}
		out = append(out, s)
	}
	return out
}
