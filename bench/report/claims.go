package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Verdict is the measured outcome of a claim.
type Verdict string

// Verdicts. A claim holds or fails only when every repetition agrees, so
// the spread across repetitions decides, not the luck of one run; data
// that is missing or straddles the threshold gives Inconclusive.
const (
	Holds        Verdict = "holds"
	Fails        Verdict = "fails"
	Inconclusive Verdict = "inconclusive"
)

// Thresholds of the claims, stated in the report beside each verdict.
const (
	// latencyBand: "almost equal" acquisition latency means within this
	// factor either way.
	latencyBand = 1.5
	// throughputMargin: "more throughput" means at least this factor more.
	throughputMargin = 1.05
	// immediate: a median handover within this many ms counts as
	// immediate (a few round trips, the holder process waking up, and
	// scheduling on a busy machine). The median, not a tail percentile,
	// because with a handful of trials the tail is one scheduling hiccup.
	immediateMS = 10.0
	// leaseSlack: "at most one lease" allows this factor over the lease
	// for detection and scheduling.
	leaseSlack = 1.1
	// fullTTL: a crashed holder's key lives until its TTL runs out, counted
	// from the watchdog's last extension, which is at most ttl/3 before the
	// crash: the handover is at least TTL − ttl/3. This share of the TTL
	// (2/3 less 10% for timing) is the threshold.
	fullTTL = 0.6
	// fifoTolerance: inversions per 1,000 grants still counted as strict
	// FIFO, because request times are taken in the bench before the
	// request travels: two requests sent within one network delay may
	// reach the server in either order.
	fifoTolerance = 1.0
	// oneWakeup: requests per grant at most this count as "only the next
	// waiter is woken" (a waiter woken in vain would ask again).
	oneWakeup = 1.05
	// quietOps: coordinator commands per grant at most this count as quiet
	// contention (the request, its answer, an occasional heartbeat).
	quietOps = 2.0
)

// Claim is one statement of the comparison between monolock and
// Redis/Redlock, made testable, with the verdict the run's data gives.
type Claim struct {
	// ID is stable across runs, for scripts: "acquire-latency", ...
	ID string `json:"id"`
	// Claim is the claim as the comparison makes it; Statement is the
	// testable form the data is checked against; Threshold is the rule.
	Claim     string  `json:"claim"`
	Statement string  `json:"statement"`
	Threshold string  `json:"threshold"`
	Verdict   Verdict `json:"verdict"`
	// Evidence gives the numbers behind the verdict, or what is missing.
	Evidence string `json:"evidence"`
}

// span is a figure's median and spread across repetitions.
type span struct {
	median, lo, hi float64
	n              int
}

func spanOf(x results.Row) span { return span{x.Median, x.Min, x.Max, x.N} }

func (s span) String() string { return s.in("") }

// in prints the span with a unit after the median: "121.8 us (114.1–127.0,
// n=3)".
func (s span) in(unit string) string {
	m := num(s.median)
	if unit != "" {
		m += " " + unit
	}
	if s.n > 1 && s.lo != s.hi {
		return fmt.Sprintf("%s (%s–%s, n=%d)", m, num(s.lo), num(s.hi), s.n)
	}
	return fmt.Sprintf("%s (n=%d)", m, s.n)
}

// atMost judges "s ≤ limit" by the spread.
func atMost(s span, limit float64) Verdict {
	switch {
	case s.hi <= limit:
		return Holds
	case s.lo > limit:
		return Fails
	}
	return Inconclusive
}

// atLeast judges "s ≥ limit" by the spread.
func atLeast(s span, limit float64) Verdict {
	switch {
	case s.lo >= limit:
		return Holds
	case s.hi < limit:
		return Fails
	}
	return Inconclusive
}

// Check evaluates every claim against the run's data. The result is in a
// fixed order; it depends on r only.
func Check(r *results.Results) []Claim {
	f := newFigures(r)
	return []Claim{
		f.claimAcquireLatency(),
		f.claimThroughput(),
		f.claimGraceful(),
		f.claimCrash(),
		f.claimFreeze(),
		f.claimCrashTTL(redis, "Redis"),
		f.claimCrashTTL(redlock, "Redlock"),
		f.claimFIFO(),
		f.claimOneWakeup(),
		f.claimQuiet(),
	}
}

func missing(what ...string) string {
	return "not measured in this run: no " + strings.Join(what, ", no ")
}

func (f *figures) claimAcquireLatency() Claim {
	c := Claim{
		ID:        "acquire-latency",
		Claim:     "Acquisition latency is almost the same as Redis SET NX.",
		Statement: "Uncontended (latency, w1), monolock's median acquire p50 is within a factor of the Redis contender's.",
		Threshold: fmt.Sprintf("holds when monolock/Redis stays within 1/%.1f…%.1f for every pairing of repetitions (min/max spread); fails when it stays outside", latencyBand, latencyBand),
		Verdict:   Inconclusive,
	}
	m, okM := f.row("latency", monolock, "w1", "acquire_p50")
	rd, okR := f.row("latency", redis, "w1", "acquire_p50")
	if !okM || !okR {
		c.Evidence = missing("latency w1 acquire_p50 for monolock and redis")
		return c
	}
	lo, hi := m.Min/rd.Max, m.Max/rd.Min
	switch {
	case lo >= 1/latencyBand && hi <= latencyBand:
		c.Verdict = Holds
	case hi < 1/latencyBand || lo > latencyBand:
		c.Verdict = Fails
	}
	c.Evidence = fmt.Sprintf("monolock %s, redis %s: ratio %s",
		spanOf(m).in("us"), spanOf(rd).in("us"), ratio(m.Median, rd.Median))
	if lo != hi {
		c.Evidence += fmt.Sprintf(" (spread %s–%s)", ratio(lo, 1), ratio(hi, 1))
	}
	return c
}

// highestDistinctAny returns the distinct-keys throughput variant with the
// most workers that any lock (not a floor) ran.
func (f *figures) highestDistinctAny() (string, int) {
	best, bestW := "", 0
	for _, c := range f.locks("throughput") {
		if v, w := f.highestDistinct(c, c); w > bestW {
			best, bestW = v, w
		}
	}
	return best, bestW
}

// highestDistinct returns the distinct-keys throughput variant with the
// most workers that both contenders ran.
func (f *figures) highestDistinct(a, b string) (string, int) {
	best, bestW := "", 0
	for _, v := range f.variants("throughput") {
		w, ok := workersOf(v)
		if !ok || !strings.HasPrefix(v, "distinct-") || w <= bestW {
			continue
		}
		_, okA := f.row("throughput", a, v, "cycles_per_sec")
		_, okB := f.row("throughput", b, v, "cycles_per_sec")
		if okA && okB {
			best, bestW = v, w
		}
	}
	return best, bestW
}

func (f *figures) claimThroughput() Claim {
	c := Claim{
		ID:        "short-lock-throughput",
		Claim:     "At a high rate of very short locks Redis, which reuses connections, gives more throughput.",
		Statement: "Short locks (hold 0) on distinct keys at the highest worker count: the Redis contender completes more cycles/s than monolock.",
		Threshold: fmt.Sprintf("holds when Redis's slowest repetition is ≥ %.2f× monolock's fastest; fails when Redis's fastest is < %.2f× monolock's slowest", throughputMargin, throughputMargin),
		Verdict:   Inconclusive,
	}
	v, w := f.highestDistinct(monolock, redis)
	if v == "" {
		c.Evidence = missing("throughput distinct-wN cycles_per_sec for both monolock and redis")
		return c
	}
	m, _ := f.row("throughput", monolock, v, "cycles_per_sec")
	rd, _ := f.row("throughput", redis, v, "cycles_per_sec")
	switch {
	case rd.Min >= throughputMargin*m.Max:
		c.Verdict = Holds
	case rd.Max < throughputMargin*m.Min:
		c.Verdict = Fails
	}
	c.Evidence = fmt.Sprintf("%d workers: redis %s, monolock %s: redis/monolock %s",
		w, spanOf(rd).in("cycles/s"), spanOf(m).in("cycles/s"), ratio(rd.Median, m.Median))
	return c
}

// failedTrials returns the failed-trials figure of a handover mode.
func (f *figures) failedTrials(contender, mode string) (results.Row, bool) {
	return f.row("handover", contender, mode, "failed")
}

func (f *figures) claimGraceful() Claim {
	c := Claim{
		ID:        "graceful-immediate",
		Claim:     "After a controlled stop the lock passes to the next waiter immediately.",
		Statement: "monolock handover after a graceful release: the median trial within a few milliseconds, no failed trial.",
		Threshold: fmt.Sprintf("holds when p50 ≤ %s ms in every repetition and no trial failed; fails when p50 > %s ms in every repetition or any trial failed", num(immediateMS), num(immediateMS)),
		Verdict:   Inconclusive,
	}
	p50, ok := f.row("handover", monolock, "graceful", "p50")
	if !ok {
		c.Evidence = missing("handover graceful p50 for monolock")
		return c
	}
	c.Verdict = atMost(spanOf(p50), immediateMS)
	c.Evidence = "monolock graceful p50 " + spanOf(p50).in("ms")
	if p95, ok := f.row("handover", monolock, "graceful", "p95"); ok {
		c.Evidence += ", p95 " + spanOf(p95).in("ms")
	}
	for _, other := range []string{redis, redlock} {
		if x, ok := f.row("handover", other, "graceful", "p50"); ok {
			c.Evidence += fmt.Sprintf("; %s p50 %s", other, spanOf(x).in("ms"))
		}
	}
	if fl, ok := f.failedTrials(monolock, "graceful"); ok && fl.Max > 0 {
		c.Verdict = Fails
		c.Evidence += fmt.Sprintf("; failed trials %s", spanOf(fl))
	}
	return c
}

// leaseClaim judges "handover max ≤ slack × lease" for monolock in mode.
func (f *figures) leaseClaim(c Claim, mode string) Claim {
	c.Verdict = Inconclusive
	lease, okL := f.lease(monolock)
	mx, ok := f.row("handover", monolock, mode, "max")
	switch {
	case !ok:
		c.Evidence = missing("handover " + mode + " max for monolock")
		return c
	case !okL:
		c.Evidence = "the run recorded no lease for monolock"
		return c
	}
	limit := leaseSlack * float64(lease) / float64(time.Millisecond)
	c.Verdict = atMost(spanOf(mx), limit)
	c.Evidence = fmt.Sprintf("monolock %s max %s; lease %s, limit %s ms", mode, spanOf(mx).in("ms"), lease, num(limit))
	if fl, ok := f.failedTrials(monolock, mode); ok && fl.Max > 0 {
		c.Verdict = Fails
		c.Evidence += fmt.Sprintf("; failed trials %s", spanOf(fl))
	}
	return c
}

func (f *figures) claimCrash() Claim {
	return f.leaseClaim(Claim{
		ID:        "crash-one-lease",
		Claim:     "After a holder crashes, the next waiter gets the lock immediately or at most one lease later.",
		Statement: "monolock handover after SIGKILL of the holder: the slowest trial is at most one lease.",
		Threshold: fmt.Sprintf("holds when the max trial ≤ %.1f × lease in every repetition and no trial failed; fails when it exceeds that in every repetition or a trial failed", leaseSlack),
	}, "crash")
}

func (f *figures) claimFreeze() Claim {
	return f.leaseClaim(Claim{
		ID:        "freeze-one-lease",
		Claim:     "A frozen holder (SIGSTOP) loses the lock after one lease of silence.",
		Statement: "monolock handover after SIGSTOP of the holder: the slowest trial is at most one lease.",
		Threshold: fmt.Sprintf("holds when the max trial ≤ %.1f × lease in every repetition and no trial failed; fails when it exceeds that in every repetition or a trial failed", leaseSlack),
	}, "freeze")
}

func (f *figures) claimCrashTTL(contender, label string) Claim {
	c := Claim{
		ID:        contender + "-crash-ttl",
		Claim:     label + " keeps a crashed holder's lock until its TTL expires.",
		Statement: label + " handover after SIGKILL of the holder: the waiter gets the lock only when the key expires, at least TTL minus one watchdog period (ttl/3) after the crash.",
		Threshold: fmt.Sprintf("holds when p50 ≥ %.1f × TTL in every repetition; fails when p50 < %.1f × TTL in every repetition", fullTTL, fullTTL),
		Verdict:   Inconclusive,
	}
	p50, ok := f.row("handover", contender, "crash", "p50")
	ttl, okT := f.lease(contender)
	switch {
	case !ok:
		c.Evidence = missing("handover crash p50 for " + contender)
		return c
	case !okT:
		c.Evidence = "the run recorded no TTL for " + contender
		return c
	}
	limit := fullTTL * float64(ttl) / float64(time.Millisecond)
	c.Verdict = atLeast(spanOf(p50), limit)
	c.Evidence = fmt.Sprintf("%s crash p50 %s; TTL %s, threshold %s ms", contender, spanOf(p50).in("ms"), ttl, num(limit))
	return c
}

// fairnessVariant returns the first fairness variant monolock ran.
func (f *figures) fairnessVariant() string {
	for _, v := range f.variants("fairness") {
		if _, ok := f.row("fairness", monolock, v, "grants"); ok {
			return v
		}
		for _, x := range f.raws("fairness", monolock, v) {
			if len(x.Metrics) > 0 {
				return v
			}
		}
	}
	return ""
}

func (f *figures) claimFIFO() Claim {
	c := Claim{
		ID:        "strict-fifo",
		Claim:     "Waiters are served in strict FIFO order.",
		Statement: "monolock under contention on one hot lock: no grant overtakes an earlier pending request.",
		Threshold: fmt.Sprintf("holds when FIFO inversions ≤ %s per 1,000 grants in every repetition (request times are taken before the request travels, so requests sent within one network delay may arrive in either order); fails when above in every repetition", num(fifoTolerance)),
		Verdict:   Inconclusive,
	}
	v := f.fairnessVariant()
	x, ok := f.row("fairness", monolock, v, "fifo_inversions_per_1k")
	if !ok {
		c.Evidence = missing("fairness fifo_inversions_per_1k for monolock")
		return c
	}
	c.Verdict = atMost(spanOf(x), fifoTolerance)
	c.Evidence = fmt.Sprintf("monolock %s: %s inversions per 1,000 grants", v, spanOf(x))
	if y, ok := f.row("fairness", redis, v, "fifo_inversions_per_1k"); ok {
		c.Evidence += fmt.Sprintf("; redis %s", spanOf(y))
	}
	return c
}

// perRepetition collects one value per repetition of a fairness variant.
func (f *figures) perRepetition(contender, variant string, value func(results.Raw) (float64, bool)) (span, bool) {
	var vals []float64
	for _, x := range f.raws("fairness", contender, variant) {
		if v, ok := value(x); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return span{}, false
	}
	slices.Sort(vals)
	n := len(vals)
	med := vals[n/2]
	if n%2 == 0 {
		med = (vals[n/2-1] + vals[n/2]) / 2
	}
	return span{med, vals[0], vals[n-1], n}, true
}

func metricOf(x results.Raw, name string) (float64, bool) {
	for _, m := range x.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// grantsOf returns the grants of a fairness repetition: its grants metric,
// else its grants count, else the sum over its clients.
func grantsOf(x results.Raw) (float64, bool) {
	if v, ok := metricOf(x, "grants"); ok {
		return v, true
	}
	if v, ok := x.Counts["grants"]; ok {
		return float64(v), true
	}
	var sum int64
	found := false
	for _, c := range x.Clients {
		if v, ok := c.Counts["grants"]; ok {
			sum, found = sum+v, true
		}
	}
	return float64(sum), found
}

// attemptsPerGrant returns the acquire requests a repetition sent per
// grant: its attempts_per_grant metric, else the attempts count (run-wide
// or summed over clients) divided by the grants.
func attemptsPerGrant(x results.Raw) (float64, bool) {
	if v, ok := metricOf(x, "attempts_per_grant"); ok {
		return v, true
	}
	g, okG := grantsOf(x)
	if !okG || g == 0 {
		return 0, false
	}
	if a, ok := x.Counts["attempts"]; ok {
		return float64(a) / g, true
	}
	var sum int64
	found := false
	for _, c := range x.Clients {
		if v, ok := c.Counts["attempts"]; ok {
			sum, found = sum+v, true
		}
	}
	return float64(sum) / g, found
}

func (f *figures) claimOneWakeup() Claim {
	c := Claim{
		ID:        "one-waiter-woken",
		Claim:     "On release only the next waiter is woken.",
		Statement: "monolock under contention: every grant costs one acquire request; no waiter is woken to find the lock taken and ask again.",
		Threshold: fmt.Sprintf("holds when acquire requests per grant ≤ %s in every repetition; fails when above in every repetition", num(oneWakeup)),
		Verdict:   Inconclusive,
	}
	v := f.fairnessVariant()
	s, ok := f.perRepetition(monolock, v, attemptsPerGrant)
	if !ok {
		c.Evidence = missing("fairness acquire attempts per grant for monolock (counts \"attempts\" and \"grants\")")
		return c
	}
	c.Verdict = atMost(s, oneWakeup)
	c.Evidence = fmt.Sprintf("monolock %s: %s requests per grant", v, s)
	if r, ok := f.perRepetition(redis, v, attemptsPerGrant); ok {
		c.Evidence += fmt.Sprintf("; redis %s", r)
	}
	return c
}

// opsPerGrant returns a fairness repetition's coordinator commands per
// grant: its server_ops_per_grant metric, else server_ops_per_sec ×
// seconds / grants.
func opsPerGrant(x results.Raw) (float64, bool) {
	if v, ok := metricOf(x, "server_ops_per_grant"); ok {
		return v, true
	}
	ops, ok := metricOf(x, "server_ops_per_sec")
	g, okG := grantsOf(x)
	if !ok || !okG || g == 0 || x.Seconds <= 0 {
		return 0, false
	}
	return ops * x.Seconds / g, true
}

func (f *figures) claimQuiet() Claim {
	c := Claim{
		ID:        "quiet-contention",
		Claim:     "Contention is quiet: waiting clients do not poll the coordinator.",
		Statement: "monolock under contention on one hot lock: the server handles a small, constant number of commands per grant however many clients wait.",
		Threshold: fmt.Sprintf("holds when server commands per grant (server_ops_per_grant, or server_ops_per_sec × seconds / grants) ≤ %s in every repetition; fails when above in every repetition", num(quietOps)),
		Verdict:   Inconclusive,
	}
	v := f.fairnessVariant()
	s, ok := f.perRepetition(monolock, v, opsPerGrant)
	if !ok {
		c.Evidence = missing("fairness server_ops_per_sec and grants for monolock")
		return c
	}
	c.Verdict = atMost(s, quietOps)
	c.Evidence = fmt.Sprintf("monolock %s: %s server commands per grant", v, s)
	if r, ok := f.perRepetition(redis, v, opsPerGrant); ok {
		c.Evidence += fmt.Sprintf("; redis %s", r)
	}
	return c
}
