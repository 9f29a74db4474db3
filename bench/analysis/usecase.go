package analysis

import (
	"slices"
)

// A UseCase is one question the decision answers, as data: the
// capabilities a lock must show in the run to be picked (capability ids
// of results.DecisionFigure; a trailing "*" stands for every id with
// that prefix), the figures that rank the locks that qualify (the first
// orders them, inside its noise they tie; the others are shown for the
// locks tied first, when they are several), and the
// caveat a reader should weigh. No contender and no metric is named
// here: the scenarios declare the figures.
type UseCase struct {
	Title    string
	Requires []string
	// IfDeclared are further requirements of a run whose scenarios declare
	// them: a run recorded before the suite measured one is decided on
	// Requires alone, and its line names only those.
	IfDeclared []string
	Rank       []string
	Caveat     string
}

// A Ranking is one figure's ranking of some locks, at one condition:
// Entries are ranked (Rank); Elsewhere are the locks measured only under
// another condition, not ranked.
type Ranking struct {
	ID string
	// Text is the figure in words, as its first declaration gives it.
	Text string
	// Condition is the condition the Entries share.
	Condition Condition
	Entries   []Entry
	Elsewhere []Apart
}

// Apart is an entry measured under another condition than a ranking's,
// and how it differs ("tested with another fault: primary-lost").
type Apart struct {
	Entry
	Reason string
}

// A Standing is one lock's standing for a use case: the capabilities it
// failed (with their figures), those without evidence, and how many
// held.
type Standing struct {
	Contender string
	Failed    []Failure
	Unknown   []string // capability ids without evidence
	// Apart are the capabilities without a verdict for the lock and why:
	// measured only under another condition than the others' ("not
	// comparable: tested at 1,000 sessions"), or trials that never reached
	// their fault ("no evidence: did not grant").
	Apart  []Failure
	Passed int
}

// A Failure is a failed capability and its figure.
type Failure struct {
	ID     string
	Figure string
	// Worst is how many repetitions Figure is the worst of (0: no
	// statistic).
	Worst int
}

// Qualified reports whether every required capability held.
func (s Standing) Qualified() bool {
	return len(s.Failed) == 0 && len(s.Unknown) == 0 && len(s.Apart) == 0
}

// A Pick is a use case's decision: the locks supported and the evidence.
type Pick struct {
	UseCase
	// Required are the capability ids required, Requires expanded.
	Required []string
	// Supports are the locks in first place of the deciding ranking
	// (every qualified lock when the use case ranks nothing).
	Supports []string
	// Deciding is the first Rank figure's ranking of the qualified
	// locks, nil when the use case ranks nothing or none has it.
	Deciding *Ranking
	// Further are the other Rank figures for the supported locks, when
	// they are several.
	Further []Ranking
	// Others is, for every family without a qualified lock, its lock
	// closest to qualifying (see closer).
	Others []Standing
	// Pitfalls are the deployments run to show a misuse that failed a
	// required capability: never picked, named to avoid.
	Pitfalls []Standing
}

// Requirements expands a use case's required ids into the run's
// capability ids; one the run's scenarios do not declare stays, as a
// requirement not measured.
func (run *Run) Requirements(u UseCase) []string {
	var out []string
	for _, r := range u.Requires {
		n := len(out)
		for _, id := range run.CapabilityIDs() {
			if r == id || matchPrefix(r, id) && run.measuredAnywhere(id) {
				out = append(out, id)
			}
		}
		if len(out) == n {
			out = append(out, r)
		}
	}
	for _, id := range u.IfDeclared {
		if run.Declared(id) {
			out = append(out, id)
		}
	}
	return out
}

// matchPrefix matches an id against a pattern ending in "*" (any
// non-empty text).
func matchPrefix(pattern, id string) bool {
	prefix, ok := cutStar(pattern)
	return ok && len(id) > len(prefix) && id[:len(prefix)] == prefix
}

func cutStar(p string) (string, bool) {
	if n := len(p); n > 0 && p[n-1] == '*' {
		return p[:n-1], true
	}
	return "", false
}

// Decide picks the locks for a use case; false when the run measured
// none of its figures, or ran no scenario that declares one of its
// requirements: a pick that never checked a requirement is no answer.
func (run *Run) Decide(u UseCase) (Pick, bool) {
	p := Pick{UseCase: u, Required: run.Requirements(u)}
	for _, id := range p.Required {
		if !run.Declared(id) {
			return Pick{}, false
		}
	}
	measured := false
	var stands []Standing
	for _, c := range run.locks {
		s := Standing{Contender: c}
		for _, id := range p.Required {
			switch j := run.Capability(c, id); j.Mark {
			case Fails:
				s.Failed = append(s.Failed, Failure{ID: id, Figure: j.Figure, Worst: j.Worst})
				measured = true
			case Holds:
				s.Passed++
				measured = true
			case NotComparable, NoEvidence:
				s.Apart = append(s.Apart, Failure{ID: id, Figure: j.Short})
			default:
				s.Unknown = append(s.Unknown, id)
			}
		}
		if run.info[c].Pitfall {
			// shown in the matrix, never a pick nor a family's best
			if len(s.Failed) > 0 {
				p.Pitfalls = append(p.Pitfalls, s)
			}
			continue
		}
		stands = append(stands, s)
	}
	var qualified []string
	for _, s := range stands {
		if s.Qualified() {
			qualified = append(qualified, s.Contender)
		}
	}
	if len(u.Rank) > 0 && len(run.decls(u.Rank[0])) > 0 {
		if rk, ok := run.Ranking(u.Rank[0], qualified); ok {
			p.Deciding = &rk
			measured = true
			for _, e := range rk.Entries {
				if e.Place == rk.Entries[0].Place && e.Failed == "" && !e.Noise {
					p.Supports = append(p.Supports, e.Contender)
				}
			}
			for _, id := range u.Rank[1:] {
				// a figure of one lock compares nothing: its section has it
				if rk, ok := run.Ranking(id, p.Supports); ok && len(rk.Entries)+len(rk.Elsewhere) > 1 {
					p.Further = append(p.Further, rk)
				}
			}
		}
	} else {
		p.Supports = qualified
	}
	if !measured {
		return Pick{}, false
	}
	p.Others = run.otherFamilies(stands)
	return p, true
}

// HigherIsBetter reads a figure's declared direction.
func (run *Run) HigherIsBetter(id string) bool {
	ds := run.decls(id)
	if len(ds) == 0 {
		return false
	}
	s, _ := run.r.Scenario(ds[0].scenario)
	m, _ := s.Metric(ds[0].Metric)
	return m.Better == "higher"
}

// metricLabel names a scenario's metric for readers: its declared label,
// or its name in an old run that declared none.
func (run *Run) metricLabel(scenario, metric string) string {
	s, _ := run.r.Scenario(scenario)
	if m, ok := s.Metric(metric); ok && m.Label != "" {
		return m.Label
	}
	return metric
}

// Ranking ranks the contenders' figures id at one condition: the one
// most of them were measured at (on a tie, the one declared first);
// the others are Elsewhere, with how their condition differs. False
// when none has the figure.
func (run *Run) Ranking(id string, contenders []string) (Ranking, bool) {
	ds := run.decls(id)
	if len(ds) == 0 {
		return Ranking{}, false
	}
	var es []Entry
	for _, c := range contenders {
		if j := run.Figure(c, id); len(j.Entry.Values) > 0 || j.Entry.Failed != "" {
			es = append(es, j.Entry)
		}
	}
	if len(es) == 0 {
		return Ranking{}, false
	}
	// Groups of matching conditions, by size, then by declaration.
	declared := func(c Condition) int {
		for i, d := range ds {
			if d.scenario == c.Scenario && slices.Contains(run.candidates(d), c.Variant) {
				return i
			}
		}
		return len(ds)
	}
	var groups [][]Entry
	for _, e := range es {
		i := slices.IndexFunc(groups, func(g []Entry) bool { return g[0].Condition.Matches(e.Condition) })
		if i < 0 {
			groups = append(groups, []Entry{e})
			continue
		}
		groups[i] = append(groups[i], e)
	}
	slices.SortStableFunc(groups, func(a, b []Entry) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return declared(a[0].Condition) - declared(b[0].Condition)
	})
	text := ds[0].Text
	if ds[0].Op != "" {
		// A capability ranks by its own figure: say which.
		text = ShortLabel(text) + ": " + run.metricLabel(ds[0].scenario, ds[0].Metric)
	}
	rk := Ranking{ID: id, Text: text, Condition: groups[0][0].Condition, Entries: Rank(groups[0], run.HigherIsBetter(id))}
	for _, g := range groups[1:] {
		for _, e := range g {
			rk.Elsewhere = append(rk.Elsewhere, Apart{Entry: e, Reason: e.Condition.Differs(rk.Condition)})
		}
	}
	return rk, true
}

// otherFamilies names, for every family without a lock that qualifies,
// its lock closest to qualifying and what it failed or did not measure.
func (run *Run) otherFamilies(stands []Standing) []Standing {
	var families []string
	for _, s := range stands {
		if s.Qualified() {
			families = append(families, run.Family(s.Contender))
		}
	}
	best := map[string]Standing{}
	var order []string
	for _, s := range stands {
		fam := run.Family(s.Contender)
		if slices.Contains(families, fam) || s.Qualified() {
			continue
		}
		b, seen := best[fam]
		if !seen {
			order = append(order, fam)
		}
		if !seen || closer(s, b) {
			best[fam] = s
		}
	}
	var out []Standing
	for _, fam := range order {
		if s := best[fam]; !s.Qualified() {
			out = append(out, s)
		}
	}
	return out
}

// closer reports whether a lock is closer to qualifying than b, as
// evidence: more requirements measured first (a measured ✗ says more
// than "not measured"), then more requirements shown, then fewer failed.
func closer(a, b Standing) bool {
	am, bm := a.Passed+len(a.Failed), b.Passed+len(b.Failed)
	switch {
	case am != bm:
		return am > bm
	case a.Passed != b.Passed:
		return a.Passed > b.Passed
	}
	return len(a.Failed) < len(b.Failed)
}

// UseCases are the questions the decision answers.
var UseCases = []UseCase{
	{
		Title:      "Batch jobs (cron, deploys): a stale write is damage",
		Requires:   []string{"fenced-store", "learns-first", "frozen-freed"},
		IfDeclared: []string{"no-early-grant"},
		Rank:       []string{"learn-first-margin", "handover-freeze"},
		Caveat:     "Fencing protects only a resource that checks the token: with one that does not, a holder paused past its lease wrote after the next grant with every lock here that granted (safety pause, unfenced store).",
	},
	{
		// A leader is elected again only while the coordinator grants:
		// its availability is a requirement here, not a ranking figure.
		Title:      "Leader election: one leader at a time, and a new one soon after the leader or a coordinator server fails",
		Requires:   []string{"learns-first", "frozen-freed", "host-loss-freed", "granting-server-down"},
		IfDeclared: []string{"no-early-grant"},
		Rank:       []string{"handover-crash", "handover-freeze"},
		Caveat:     "A leader that writes to a shared store needs fencing as batch jobs do; a single coordinator elects no leader while it is down.",
	},
	{
		// The tail decides: a lossy link stalls a fresh connection's
		// handshake for a retransmission timeout, which a median hides.
		Title:  "A lock on every request's path (one worker, uncontended)",
		Rank:   []string{"acquire-p99", "acquire-p50"},
		Caveat: "One worker on an idle lock: the round trips a grant costs, and on a lossy link the retransmissions, not the coordinator's work.",
	},
	{
		Title:  "Very many short locks (hold 0, many workers on distinct keys)",
		Rank:   []string{"short-locks-rate", "short-locks-cpu"},
		Caveat: "The load generator shares the servers' cores: a rate here is a lower bound of a dedicated server's.",
	},
	{
		Title:    "One hot lock passed among many workers",
		Requires: []string{"fifo", "waiters-no-poll"},
		Rank:     []string{"handover-graceful", "hot-wait-p99", "hot-coordinator-load"},
		Caveat:   "The coordinator load is that of the few clients of the fairness scenario; a polling lock's load grows with its waiters (Scale, queue).",
	},
	{
		Title:      "Holders that may crash, freeze or lose their host",
		Requires:   []string{"frozen-freed", "host-loss-freed", "learns-first"},
		IfDeclared: []string{"no-early-grant"},
		Rank:       []string{"handover-crash", "handover-freeze"},
		Caveat:     "After a freeze or a host loss the lock is free only once the lease expired: a shorter lease frees it sooner and costs more keep-alives.",
	},
	{
		Title:    "The coordinator itself may fail",
		Requires: []string{"granting-server-down", "restart-no-double-grant"},
		// Ranked by the capability's own figure, so that clusters compare a minority
		// down and a standby pair its primary lost; a whole restart is
		// another fault.
		Rank:   []string{"granting-server-down", "recovery", "failover-detection"},
		Caveat: "A cluster or a standby pair costs more servers to run; a standby pair keeps its guarantees only while its failover fences the old primary.",
	},
	{
		Title:    "Very many idle sessions (each holding a lock and keeping it alive)",
		Requires: []string{"sessions-lease*"},
		Rank:     []string{"server-bytes-per-session"},
		Caveat:   "The session counts are capped by this machine's open-file limits.",
	},
}
