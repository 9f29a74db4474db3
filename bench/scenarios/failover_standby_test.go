package scenarios

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/contenders/monolockstandby"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/output/results"
)

func standbyEnv(t *testing.T) *bench.Env {
	t.Helper()
	d := benchtest.Start(t, monolockstandby.Server)
	servers := d.Servers(monolockstandby.Server.Name)
	return &bench.Env{Contender: monolockstandby.Contender(), Servers: servers, Addrs: bench.Addrs(servers), Lease: 2 * time.Second, Deployment: d}
}

func figures(t *testing.T, raw results.Raw) map[string]float64 {
	t.Helper()
	if raw.Skipped != "" {
		t.Fatalf("skipped: %s", raw.Skipped)
	}
	got := map[string]float64{}
	for _, m := range raw.Metrics {
		got[m.Name] = m.Value
	}
	t.Logf("figures %v, counts %v", got, raw.Counts)
	return got
}

var tinyStandby = FailoverConfig{Before: 400 * time.Millisecond, After: time.Second}.withDefaults(true)

// A real pair of monolock servers, the primary frozen: the watcher
// (/readyz every 100 ms, fall 2) moves the address no sooner than its
// checks allow, the clients grant again on the standby, and with the
// fence no name is granted twice and no stale write is accepted.
func TestStandbyPrimaryLostOnRealServers(t *testing.T) {
	env := standbyEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, fastWatch, true)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	// fall−1 whole intervals at least separate the first failing check
	// from the fall-th one's timeout.
	if d := got["d_ms"]; d < ms(time.Duration(fastWatch.fall-1)*fastWatch.interval) || d > ms(20*fastWatch.expected()) {
		t.Errorf("D = %v ms for %s", d, fastWatch)
	}
	if _, ok := got["recovery_ms"]; !ok {
		t.Error("no grant after the move")
	}
	if got["grants_dialled_after_move"] == 0 {
		t.Error("no claim dialled after the move was granted")
	}
	for _, k := range []string{"double_grants", "unsafe_writes_fenced", "unsafe_writes_unfenced", "grants_while_down"} {
		if v, ok := got[k]; !ok || v != 0 {
			t.Errorf("%s = %v (%v), want 0 with the fence", k, v, ok)
		}
	}
	// The long holder stopped on its own: by the move's reset or, if
	// first, 0.8 × lease after its last confirmation.
	if v, ok := got["holder_stop_ms"]; !ok || v > got["d_ms"]+ms(env.Lease) {
		t.Errorf("holder_stop_ms %v (%v), D %v", v, ok, got["d_ms"])
	}
	// The pair serves again for the next variant.
	if err := env.Servers[0].Unpause(ctx); err != nil {
		t.Fatal(err)
	}
}

// no-fence on a real pair: the address moves while the primary stays
// alive, its queued waiters are granted by it while new claims reach the
// standby, and the counts show both servers granting the shared name: at
// least one double grant, and stale writes that the unfenced store
// accepts. (The fenced store's count is measured, not asserted: it
// depends on which server's token is higher in the same second.)
func TestStandbyNoFenceCountsOnRealServers(t *testing.T) {
	env := standbyEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, watch{}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	if got["grants_dialled_before_move"] < 1 || got["grants_dialled_after_move"] < 1 {
		t.Errorf("grants dialled before the move %v, after %v: want both servers granting", got["grants_dialled_before_move"], got["grants_dialled_after_move"])
	}
	if got["double_grants"] < 1 || got["double_grants"] > float64(raw.Counts["shared_grants"]) {
		t.Errorf("double grants %v of %d shared grants", got["double_grants"], raw.Counts["shared_grants"])
	}
	if got["unsafe_writes_unfenced"] < 1 {
		t.Errorf("unfenced store: %v stale writes accepted", got["unsafe_writes_unfenced"])
	}
	if _, ok := got["d_ms"]; ok {
		t.Error("no-fence reports a D: its move is the bench's, not a watcher's")
	}
}

// The standby variants skip every contender that is not a pair, and the
// other variants skip the pair, each with its reason, before the run.
func TestStandbySkips(t *testing.T) {
	s := FailoverConfig{}.Scenario()
	pair, single := monolockstandby.Contender(), bench.Contender{Name: "single"}
	for _, v := range s.Variants(true) {
		standbyVariant := v.Name == FailoverPrimaryLost || v.Name == FailoverPrimaryLostFast || v.Name == FailoverNoFence
		if v.Skip == nil {
			t.Fatalf("%s has no Skip", v.Name)
		}
		switch {
		case standbyVariant && (v.Skip(pair) != "" || v.Skip(single) != noStandby):
			t.Errorf("%s: skips the pair %q, a single server %q", v.Name, v.Skip(pair), v.Skip(single))
		case !standbyVariant && (v.Skip(pair) != standbyPair || v.Skip(single) != ""):
			t.Errorf("%s: skips the pair %q, a single server %q", v.Name, v.Skip(pair), v.Skip(single))
		}
	}
}

// The same failover with the pair in containers: the primary paused
// (docker pause), the address moved to the standby's container.
func TestStandbyPrimaryLostContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	d := benchtest.StartContainers(t, monolockstandby.Server)
	servers := d.Servers(monolockstandby.Server.Name)
	env := &bench.Env{Contender: monolockstandby.Contender(), Servers: servers, Addrs: bench.Addrs(servers), Lease: 2 * time.Second, Deployment: d}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, fastWatch, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("servers %v, errors %v, series %v", env.Addrs, raw.Errors, raw.Series)
	got := figures(t, raw)
	if _, ok := got["recovery_ms"]; !ok {
		t.Error("no grant after the move")
	}
}

// The figures of a made-up standby variant: the move 500 ms after the
// fault, one claim dialled before it and granted after, and on the shared
// name a second client granted while the first still believes it holds
// the name, with the writes both stores decided.
func TestStandbyRawFigures(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tl := &timeline{counts: map[string]int64{}}
	for ms := 10; ms < 1000; ms += 10 {
		tl.grant(grantEvent{began: at(ms - 5), attempt: at(ms - 5), at: at(ms), token: uint64(ms), tokenOK: true, released: at(ms + 1)})
	}
	// Dialled before the move (at 1.5 s), granted after it.
	tl.grant(grantEvent{began: at(1400), attempt: at(1400), at: at(1600), token: 5000, tokenOK: true, released: at(1601)})
	for ms := 1700; ms < 2000; ms += 10 {
		tl.grant(grantEvent{began: at(ms - 5), attempt: at(ms - 5), at: at(ms), token: 5000 + uint64(ms), tokenOK: true, released: at(ms + 1)})
	}
	sh := newSharedLoad()
	tok := func(v uint64) *uint64 { return &v }
	a := guardedstore.Grant{Client: "a", Lock: "L", Token: tok(5), At: check.Now()}
	sh.fenced.Apply(guardedstore.Write{Client: "a", Lock: "L", Token: a.Token})
	sh.unfenced.Apply(guardedstore.Write{Client: "a", Lock: "L", Token: a.Token})
	b := guardedstore.Grant{Client: "b", Lock: "L", Token: tok(3), At: check.Now()}
	// b's lower token: the fenced store rejects it; then a's write after
	// b's grant is stale, and both stores accept it.
	for _, w := range []guardedstore.Write{{Client: "b", Lock: "L", Token: b.Token}, {Client: "a", Lock: "L", Token: a.Token}} {
		sh.fenced.Apply(w)
		sh.unfenced.Apply(w)
	}
	a.End = check.Now()
	b.End = check.Now()
	sh.grants = []guardedstore.Grant{a, b}
	sh.longLost = []time.Time{at(900), at(1300), at(1700)}
	ft := faultTimes{start: t0, fault: at(1000), faultDone: at(1001), restart: at(1500), up: at(1500), end: at(2000)}
	got := figures(t, standbyRaw(tl, sh, ft, 2*time.Second, true))
	want := map[string]float64{
		"d_ms": 500, "unavailable_ms": 610, "gap_over_d": 610.0 / 500, "holder_stop_ms": 300, "holder_stop_limit_ms": 1600,
		"double_grants": 1, "unsafe_writes_fenced": 1, "unsafe_writes_unfenced": 1, "fenced_rejections": 1,
		"grants_dialled_before_move": 1, "grants_dialled_after_move": 30, "tokens_monotonic": 1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 0.01 {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, v)
		}
	}
	if _, ok := got["restart_ms"]; ok {
		t.Error("a standby variant reports a restart time")
	}
}
