package scenarios

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// tinyFailover keeps the test to a few seconds per variant. The pause
// stays at its default of one second: monolock's token is
// max(last+1, unix_second<<20), so a restart within the second of the last
// grant before the fault could issue a lower token (the scenario measures
// that at a shorter pause; this test asserts the default).
var tinyFailover = FailoverConfig{
	Before: 400 * time.Millisecond, After: time.Second, Trials: 2,
}

func metricOf(t *testing.T, r *results.Results, contender, variant, metric string) (float64, bool) {
	t.Helper()
	for _, x := range r.Summary {
		if x.Scenario == "failover" && x.Contender == contender && x.Variant == variant && x.Metric == metric {
			return x.Median, true
		}
	}
	return 0, false
}

// A real kill and restart of a real monolock server, a real Redis and a
// majority of real Redlock masters through the scenario: every contender
// grants again after the restart, monolock grants nothing while its
// server is down and its tokens after the restart exceed those before.
// Single-server contenders skip the cluster variants with their reason.
func TestFailoverRestart(t *testing.T) {
	cs, d := locks(t)
	cs = keep(cs, named("monolock", "redis", "redlock"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := runScenario(ctx, t, tinyFailover.Scenario(), cs, d, 2*time.Second)
	for _, c := range cs {
		for _, v := range []string{FailoverRestart, FailoverGraceful} {
			if _, ok := metricOf(t, r, c.Name, v, "recovery_ms"); !ok {
				t.Errorf("%s/%s: no recovery after the restart", c.Name, v)
			}
			if x, ok := metricOf(t, r, c.Name, v, "unavailable_ms"); !ok || x <= 0 {
				t.Errorf("%s/%s: unavailable_ms %v, %v", c.Name, v, x, ok)
			}
		}
	}
	for _, v := range []string{FailoverRestart, FailoverGraceful} {
		if x, ok := metricOf(t, r, "monolock", v, "tokens_monotonic"); !ok || x != 1 {
			t.Errorf("monolock/%s: tokens_monotonic %v, %v; want 1", v, x, ok)
		}
		if x, _ := metricOf(t, r, "monolock", v, "token_gap"); x <= 0 {
			t.Errorf("monolock/%s: token gap %v", v, x)
		}
		if x, ok := metricOf(t, r, "monolock", v, "grants_while_down"); !ok || x != 0 {
			t.Errorf("monolock/%s: %v grants while the server was down", v, x)
		}
	}
	// Redlock keeps granting with a minority down.
	if x, ok := metricOf(t, r, "redlock", FailoverMinority, "grant_rate_ratio"); !ok || x <= 0 {
		t.Errorf("redlock/minority-down: grant rate ratio %v, %v", x, ok)
	}
	// Every restart-unsafe trial gave A the lock and B tried after it.
	if x, ok := metricOf(t, r, "redlock", FailoverUnsafe, "double_grants"); !ok {
		t.Error("redlock/restart-unsafe: no double_grants figure")
	} else {
		t.Logf("redlock restart-unsafe: %v double grants in %d trials", x, tinyFailover.Trials)
	}
	for _, want := range []string{
		"failover/minority-down/monolock skipped: " + noMinority,
		"failover/minority-down/redis skipped: " + noMinority,
		"failover/restart-unsafe/monolock skipped: " + noSplit,
	} {
		if !slices.Contains(skips(r), want) {
			t.Errorf("skips %q lack %q", skips(r), want)
		}
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "failed") {
			t.Errorf("note: %s", n)
		}
	}
}

// skips lists the records of r that say why they were not measured, as
// "scenario/variant/contender skipped: reason".
func skips(r *results.Results) []string {
	var out []string
	for _, x := range r.Raw {
		if x.Skipped != "" {
			out = append(out, x.Scenario+"/"+x.Variant+"/"+x.Contender+" skipped: "+x.Skipped)
		}
	}
	return out
}

// The figures of a made-up timeline: grants every 10ms before a fault at
// 1s, none until 2.5s, then again; the restart began at 2s.
func TestFailoverRawFigures(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tl := &timeline{counts: map[string]int64{}}
	token := uint64(100)
	for ms := 10; ms < 1000; ms += 10 {
		token++
		tl.grant(grantEvent{began: at(ms - 5), attempt: at(ms - 5), at: at(ms), token: token, tokenOK: true, released: at(ms + 1), releaseTook: time.Millisecond})
	}
	// A holder told at 1.005s that its lock ended.
	tl.grant(grantEvent{began: at(995), attempt: at(995), at: at(996), token: token + 1, tokenOK: true, lostAt: at(1005), released: at(1005)})
	tl.fail(at(1500), "refused", errors.New("connection refused"))
	for ms := 2500; ms < 3000; ms += 10 {
		tl.grant(grantEvent{began: at(1200), attempt: at(ms - 5), at: at(ms), token: 5000 + uint64(ms), tokenOK: true, released: at(ms + 1)})
	}
	ft := faultTimes{start: t0, fault: at(1000), faultDone: at(1001), restart: at(2000), up: at(2400), end: at(3000)}
	raw := failoverRaw(tl, ft)
	got := map[string]float64{}
	for _, m := range raw.Metrics {
		got[m.Name] = m.Value
	}
	want := map[string]float64{
		"unavailable_ms": 1504, "recovery_ms": 500, "restart_ms": 400, "failed_attempts": 1,
		"lost_holders": 1, "lost_after_ms": 5, "grants_while_down": 0, "tokens_monotonic": 1,
		"token_gap": 7500 - 200, "takeover_ms": 1504, "tokens_promise_broken": 0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 0.01 {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, v)
		}
	}
	if got["zero_grant_ms"] < 1300 || got["zero_grant_ms"] > 1500 {
		t.Errorf("zero_grant_ms = %v, want about 1.5s less partial buckets", got["zero_grant_ms"])
	}
	if raw.Counts["failed_refused"] != 1 {
		t.Errorf("counts %v", raw.Counts)
	}

	// A restart whose first grant comes within the second of the last
	// grant before the kill is outside the tokens' promise: takeover_ms
	// says so and no tokens_promise_broken is recorded, even for a
	// backward token.
	quick := &timeline{counts: map[string]int64{}}
	quick.grant(grantEvent{began: at(900), attempt: at(900), at: at(950), token: 900, tokenOK: true, released: at(951)})
	quick.grant(grantEvent{began: at(1500), attempt: at(1500), at: at(1600), token: 800, tokenOK: true, released: at(1601)})
	ft = faultTimes{start: t0, fault: at(1000), faultDone: at(1001), restart: at(1500), up: at(1550), end: at(2000)}
	got = map[string]float64{}
	for _, m := range failoverRaw(quick, ft).Metrics {
		got[m.Name] = m.Value
	}
	if got["tokens_monotonic"] != 0 || got["takeover_ms"] != 650 {
		t.Errorf("quick restart: tokens_monotonic %v, takeover_ms %v; want 0 and 650", got["tokens_monotonic"], got["takeover_ms"])
	}
	if x, ok := got["tokens_promise_broken"]; ok {
		t.Errorf("quick restart: tokens_promise_broken %v recorded within the second", x)
	}
}

// freeLocker grants every key at once, to drive the scenario without a
// server.
type freeLocker struct{}

func (freeLocker) Acquire(context.Context, string) (bench.Held, error) {
	return freeHeld{make(chan struct{})}, nil
}
func (freeLocker) Close() error { return nil }

type freeHeld struct{ lost chan struct{} }

func (freeHeld) Token() (uint64, bool)         { return 0, false }
func (h freeHeld) Lost() <-chan struct{}       { return h.lost }
func (freeHeld) Release(context.Context) error { return nil }

// externalServer is a server the backend cannot act on, like the
// external backend's.
type externalServer struct{ bench.Server }

func (externalServer) Name() string                  { return "ext" }
func (externalServer) Addr() string                  { return "ext:1" }
func (externalServer) Kill(context.Context) error    { return bench.ErrNotSupported }
func (externalServer) Stop(context.Context) error    { return bench.ErrNotSupported }
func (externalServer) Restart(context.Context) error { return bench.ErrNotSupported }

// On servers the backend cannot kill, every variant is skipped with the
// reason, none fails.
func TestFailoverSkipsWhatTheBackendCannotDo(t *testing.T) {
	c := bench.Contender{Name: "x", New: func(context.Context, []string, time.Duration, bench.OpenOptions) (bench.Locker, error) {
		return freeLocker{}, nil
	}}
	cfg := FailoverConfig{Before: 20 * time.Millisecond, Trials: 1}.withDefaults(true)
	for _, n := range []int{1, 3} {
		servers := make([]bench.Server, n)
		for i := range servers {
			servers[i] = externalServer{}
		}
		env := &bench.Env{Contender: c, Servers: servers, Addrs: bench.Addrs(servers), Lease: time.Second}
		for _, run := range []func() (results.Raw, error){
			func() (results.Raw, error) { return runFailover(context.Background(), env, cfg, FailoverRestart) },
			func() (results.Raw, error) { return runSplit(context.Background(), env, cfg, false) },
		} {
			raw, err := run()
			if err != nil || raw.Skipped == "" || len(raw.Metrics) != 0 {
				t.Fatalf("%d servers: %+v, %v; want a record of a skip", n, raw, err)
			}
			if n == 3 && !strings.Contains(raw.Skipped, "cannot kill") {
				t.Errorf("reason %q", raw.Skipped)
			}
		}
	}
}

// The variant names are the spec's failover row, quick or not; floors do
// not take part.
func TestFailoverVariantNames(t *testing.T) {
	s := FailoverConfig{}.Scenario()
	want := []string{"restart", "graceful-restart", "minority-down", "restart-unsafe", "restart-delayed", "primary-lost", "primary-lost-fast", "no-fence"}
	for _, quick := range []bool{false, true} {
		if got := variantNames(s, quick); !slices.Equal(got, want) {
			t.Errorf("quick=%v: %v, want %v", quick, got, want)
		}
	}
	if s.Floors || s.Name != "failover" {
		t.Errorf("%s: floors %v", s.Name, s.Floors)
	}
}
