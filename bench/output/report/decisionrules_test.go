package report

import (
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// withLocks gives a synthetic run the contender info and leases the
// decision section reads: families, floors, contended-only contenders.
func withLocks(r *results.Results, infos ...results.ContenderInfo) *results.Results {
	r.Contenders = infos
	for _, i := range infos {
		r.Parameters.Contender[i.Name] = results.Settings{"lease": "2s"}
	}
	return r
}

// Synthetic figures (test data, not measurements) for the rules the
// decision section applies: the best of a family is the lock with the
// most requirements measured (a measured ✗ before "not measured"), and
// the many-short-locks ranking compares the distinct-key figures only,
// never a lock measured on the shared key set alone.
func TestDecisionRules(t *testing.T) {
	r := synthetic([]fig{
		{"handover", "monolock", "freeze", "max", "ms", []float64{1990, 1980}},
		{"handover", "monolock", "host-loss", "max", "ms", []float64{1970, 1960}},
		{"handover", "monolock-warm", "freeze", "max", "ms", []float64{1900, 1890}},
		{"handover", "monolock-warm", "host-loss", "max", "ms", []float64{1840, 1830}},
		{"safety", "monolock", "host-loss", "learn_first_margin_min", "ms", []float64{-5, -4}},
		{"throughput", "redis", "distinct-w64", "cycles_per_sec", "1/s", []float64{31000, 31200, 30900}},
		{"throughput", "redis", "shared-w16", "cycles_per_sec", "1/s", []float64{19900, 20000, 19800}},
		{"throughput", "redis-spin", "shared-w16", "cycles_per_sec", "1/s", []float64{20700, 20800, 20600}},
	}, nil)
	withLocks(r, results.ContenderInfo{Name: "monolock", Family: "monolock"}, results.ContenderInfo{Name: "monolock-warm", Family: "monolock"},
		results.ContenderInfo{Name: "redis", Family: "redis"}, results.ContenderInfo{Name: "redis-spin", Family: "redis", ContendedOnly: true})
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := section(string(rep.Markdown), "Which lock for which job")
	holders := rowOf(md, "| Holders that may crash")
	if !strings.Contains(holders, "closest: monolock, which fails C3 (worst of 2: -5 ms smallest learn-first margin)") {
		t.Errorf("the holders row does not name monolock's measured ✗ as the best of its family:\n%s", holders)
	}
	short := rowOf(md, "| Very many short locks")
	if !strings.Contains(short, "redis 31,000/s (30,900–31,200, n=3)") || strings.Contains(short, "redis-spin") {
		t.Errorf("the many-short-locks row should rank the distinct-key figures only:\n%s", short)
	}
}

// rowOf returns the line of md that starts with prefix.
func rowOf(md, prefix string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// A section's findings read every declaration of a capability in its
// scenario: the failover scenario declares "keeps granting while a
// server is down" for a minority down first and for a standby's takeover
// later, and the standby's ✓ is a finding too.
func TestFindingsReadEveryDeclaration(t *testing.T) {
	r := synthetic([]fig{
		{"failover", "redlock", "minority-down", "unavailable_ms", "ms", []float64{2105, 2110}},
		{"failover", "monolock-standby", "primary-lost-fast", "unavailable_ms", "ms", []float64{342, 352}},
	}, nil)
	withLocks(r, results.ContenderInfo{Name: "redlock", Family: "redis"}, results.ContenderInfo{Name: "monolock-standby", Family: "monolock"})
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := section(string(rep.Markdown), "Failover of the coordinator")
	for _, w := range []string{"- keeps granting while a server is down: ✗ redlock (2.11 s); ✓ monolock-standby."} {
		if !strings.Contains(md, w) {
			t.Errorf("failover findings lack %q:\n%s", w, md)
		}
	}
}

// "did not grant" stands for a figure the trial would have measured had
// it granted, never for one its variant does not measure at all (the
// pause variant has no learn-first margin).
func TestDidNotGrantOnlyForMeasuredFigures(t *testing.T) {
	r := synthetic([]fig{
		{"safety", "monolock", "pause", "unsafe_writes_unfenced", "count", []float64{2, 2}},
		{"safety", "monolock", "pause", "not_granted", "count", []float64{0, 0}},
		{"safety", "postgres", "pause", "unsafe_writes_unfenced", "count", []float64{0, 0}},
		{"safety", "postgres", "pause", "not_granted", "count", []float64{2, 2}},
		{"safety", "monolock", "host-loss", "learn_first_margin_min", "ms", []float64{401, 403}},
		{"safety", "monolock", "host-loss", "not_granted", "count", []float64{0, 0}},
		{"safety", "postgres", "host-loss", "not_granted", "count", []float64{2, 2}},
	}, nil)
	withLocks(r, results.ContenderInfo{Name: "monolock", Family: "monolock"}, results.ContenderInfo{Name: "postgres", Family: "postgres"})
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Details) // the reading of every variant is in the appendix
	pause, hostLoss := rowOf(md, "- pause"), rowOf(md, "- host-loss")
	if !strings.Contains(pause, "postgres did not grant") || strings.Contains(pause, "learn-first") {
		t.Errorf("pause reading: want postgres's stale writes as did not grant and no learn-first margin:\n%s", pause)
	}
	if !strings.Contains(hostLoss, "postgres did not grant") {
		t.Errorf("host-loss reading: want postgres's margin as did not grant:\n%s", hostLoss)
	}
}

// A lock below the floor of its kind in every repetition is explained
// from the data: both figures, and how each claims as their settings
// record it (warm spares skip the connect the tcp-floor pays); a lock
// whose range meets the floor's is not called below it.
func TestBelowFloorExplained(t *testing.T) {
	r := synthetic([]fig{
		{"latency", "monolock", "w1", "acquire_p50", "us", []float64{182.5, 182.9, 188.5}},
		{"latency", "monolock-warm", "w1", "acquire_p50", "us", []float64{114.6, 114.9, 116.6}},
		{"latency", "monolock-tfo", "w1", "acquire_p50", "us", []float64{116, 177.2, 186.5}},
		{"latency", "tcp-floor", "w1", "acquire_p50", "us", []float64{116.9, 117.2, 119.4}},
	}, nil)
	withLocks(r, results.ContenderInfo{Name: "monolock", Family: "monolock"}, results.ContenderInfo{Name: "monolock-warm", Family: "monolock"},
		results.ContenderInfo{Name: "monolock-tfo", Family: "monolock"}, results.ContenderInfo{Name: "tcp-floor", Family: "floor", Floor: true})
	r.Parameters.Contender["monolock-warm"]["claim"] = "one TCP connection per claim, taken from pre-dialled spares"
	r.Parameters.Contender["tcp-floor"]["acquire"] = "TCP connect, one ACQUIRE frame in, one ACQUIRED frame out"
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md := section(string(rep.Markdown), "Latency (uncontended)")
	want := "Below the floor of their kind in every repetition: monolock-warm 114.9 µs (114.6–116.6, n=3) against tcp-floor 117.2 µs (116.9–119.4, n=3): " +
		"monolock-warm claims by “one TCP connection per claim, taken from pre-dialled spares”, its floor by “TCP connect, one ACQUIRE frame in, one ACQUIRED frame out”."
	if !strings.Contains(md, want) {
		t.Errorf("latency section lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "monolock-tfo 177.2 µs (116") {
		t.Error("monolock-tfo, whose range meets the floor's, is called below it")
	}
}

// "Unavailable" has one meaning, the glossary's: the longest stretch
// without a grant; the empty 100-ms steps are another figure with
// another name.
func TestUnavailableOneDefinition(t *testing.T) {
	r := synthetic([]fig{
		{"failover", "redlock", "minority-down", "unavailable_ms", "ms", []float64{2105, 2110}},
		{"failover", "redlock", "minority-down", "zero_grant_ms", "ms", []float64{3900, 3900}},
	}, nil)
	withLocks(r, results.ContenderInfo{Name: "redlock", Family: "redis"})
	rep, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	md, details := string(rep.Markdown), string(rep.Details)
	for _, w := range []string{
		"Unavailable, per variant: the longest stretch without a grant",
		"| redlock | 2.11 (2.10–2.11) |",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if w := "- unavailable: the longest stretch without a grant around a fault"; !strings.Contains(details, w) {
		t.Errorf("details.md (the glossary) lacks %q", w)
	}
	if !strings.Contains(details, "| empty 100-ms steps (s) |") || strings.Contains(md+details, "no grant (") {
		t.Error("the empty 100-ms steps are not named as such, or a column still calls them no grant")
	}
}
