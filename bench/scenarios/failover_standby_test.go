package scenarios

import (
	"context"
	"errors"
	"math"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/contenders/monolockstandby"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/bench/results"
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

// checkD checks D against the watcher's physics: fall checks bounded by
// the interval each must time out after the fault (the first of them may
// have begun a moment before it), and the fault's phase costs at most one
// interval more; the upper bound leaves a loaded machine room.
func checkD(t *testing.T, got map[string]float64, w watch) {
	t.Helper()
	// D runs from the moment the fault is surely in effect; the primary
	// may have stopped answering from the moment applying it began
	// (fault_took_ms earlier: 150 ms once on a loaded machine), so the
	// physics bound is on the two together.
	d, ok := got["detection_ms"]
	took := got["fault_took_ms"]
	lo, hi := ms(time.Duration(w.fall)*w.interval-20*time.Millisecond), ms(w.expected()+time.Second)
	if !ok || d+took < lo || d > hi {
		t.Errorf("D = %v ms (%v), the fault took %v ms to apply, for %s: want D + that %v ms or more, D %v ms or less", d, ok, took, w, lo, hi)
	}
	if p, ok := got["fault_phase_ms"]; !ok || p < 0 || p > ms(w.interval+100*time.Millisecond) {
		t.Errorf("fault phase %v ms (%v), want within one interval", p, ok)
	}
}

// A real pair of monolock servers on loopback, the primary frozen: the
// watcher (/readyz every 100 ms, fall 2) moves the bench's forwarder no
// sooner than its checks allow, the clients grant again on the standby,
// and the primary, frozen, grants nothing meanwhile. (Whether a name is
// granted twice and a stale write accepted is measured, not asserted: at
// this D an old holder may still believe its grant, and the tokens may go
// backwards within the second.)
func TestStandbyPrimaryLostOnRealServers(t *testing.T) {
	env := standbyEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, fastWatch, true)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	if raw.Counts["address_move_forwarder"] != 1 || raw.Counts["primary_frozen"] != 1 {
		t.Errorf("counts %v: want the forwarder moved and the primary frozen on loopback", raw.Counts)
	}
	checkD(t, got, fastWatch)
	if _, ok := got["recovery_ms"]; !ok {
		t.Error("no grant after the move")
	}
	if got["grants_dialled_after_move"] == 0 {
		t.Error("no claim dialled after the move was granted")
	}
	if v, ok := got["grants_while_down"]; !ok || v != 0 {
		t.Errorf("grants while the primary was frozen: %v (%v)", v, ok)
	}
	if got["unsafe_writes_unfenced"] > 0 && got["double_grants"] == 0 {
		t.Errorf("stale writes %v without a double grant", got["unsafe_writes_unfenced"])
	}
	// The long holder learned its loss by the move's reset (at once if it
	// waited for an answer, else at its next heartbeat, at most a quarter
	// lease later) or, if first, 0.8 × lease after its last confirmation.
	limit := min(got["detection_ms"]+ms(env.Lease/4), ms(env.Lease*4/5)) + 300
	if v, ok := got["holder_stop_ms"]; !ok || v > limit {
		t.Errorf("holder_stop_ms %v (%v), want at most %v (D %v)", v, ok, limit, got["detection_ms"])
	}
	if _, ok := got["takeover_ms"]; !ok {
		t.Error("no takeover time")
	}
	// The pair serves again for the next variant.
	if err := env.Servers[0].Unpause(ctx); err != nil {
		t.Fatal(err)
	}
}

// standbyEnvOnHosts starts a real pair of monolock servers each on an
// emulated host of its own, as the bench does under a network profile.
func standbyEnvOnHosts(t *testing.T, profile string) *bench.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("emulated hosts: not under -short (make test runs it)")
	}
	if os.Geteuid() != 0 {
		t.Skip("emulated hosts need root")
	}
	p, err := network.Parse(profile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := network.New(t.Context(), network.Options{Prefix: "mlbsb-", Profile: p})
	if errors.Is(err, network.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	hosts := func(ctx context.Context, server string) (local.Host, error) {
		return n.AddHost(ctx, server, network.HostOptions{})
	}
	d, err := local.StartOn(t.Context(), []*bench.ServerSpec{monolockstandby.Server}, nil, hosts, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	servers := d.Servers(monolockstandby.Server.Name)
	return &bench.Env{Contender: monolockstandby.Contender(), Servers: servers, Addrs: bench.Addrs(servers), Lease: 2 * time.Second, Deployment: d}
}

// The pair on emulated hosts: the primary's link is cut and the watcher
// moves a virtual IP from its host to the standby's. The clients, which
// dialled the virtual IP, grant again on the standby; afterwards the
// primary serves again at its own address (healed and restarted).
func TestStandbyPrimaryLostOnEmulatedHosts(t *testing.T) {
	env := standbyEnvOnHosts(t, "rtt=1ms")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, fastWatch, true)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	if raw.Counts["address_move_virtual_ip"] != 1 || raw.Counts["primary_link_cut"] != 1 {
		t.Errorf("counts %v: want a virtual IP moved and the primary's link cut", raw.Counts)
	}
	checkD(t, got, fastWatch)
	if got["grants_dialled_after_move"] == 0 {
		t.Error("no claim dialled after the move was granted")
	}
	if got["unsafe_writes_unfenced"] != 0 && got["double_grants"] == 0 {
		t.Errorf("stale writes %v without a double grant", got["unsafe_writes_unfenced"])
	}
	// A lost host's holder hears nothing: it learns at its own 0.8 ×
	// lease, or earlier when its next segment meets the standby's reset.
	if v, ok := got["holder_stop_ms"]; !ok || v > ms(env.Lease*4/5)+300 {
		t.Errorf("holder_stop_ms %v (%v)", v, ok)
	}
	c, err := net.DialTimeout("tcp", env.Servers[0].Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("the primary does not serve after the variant: %v", err)
	}
	c.Close()
}

// The docs' keepalived setting on emulated hosts: D is at least two
// seconds, longer than 0.8 × lease, so every old holder has given up on
// its own before the standby can grant: no double grant, no stale write,
// and the standby takes over more than a second after the primary's last
// grant, where its tokens are promised above every earlier one.
func TestStandbyKeepalivedOnEmulatedHosts(t *testing.T) {
	env := standbyEnvOnHosts(t, "rtt=1ms")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, keepalivedWatch, true)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	checkD(t, got, keepalivedWatch)
	for _, k := range []string{"double_grants", "unsafe_writes_fenced", "unsafe_writes_unfenced", "owner_writes_rejected", "tokens_promise_broken"} {
		if v, ok := got[k]; !ok || v != 0 {
			t.Errorf("%s = %v (%v), want 0", k, v, ok)
		}
	}
	if got["tokens_monotonic"] != 1 || got["takeover_ms"] <= 1000 {
		t.Errorf("tokens monotonic %v, takeover %v ms", got["tokens_monotonic"], got["takeover_ms"])
	}
	if v, ok := got["holder_stop_ms"]; !ok || v > ms(env.Lease*4/5)+300 {
		t.Errorf("holder_stop_ms %v (%v): a silent holder stops by 0.8 × lease", v, ok)
	}
}

// no-fence on emulated hosts: the virtual IP moves with the open
// connections kept on the old primary, which goes on granting on them
// while new claims reach the standby.
func TestStandbyNoFenceOnEmulatedHosts(t *testing.T) {
	env := standbyEnvOnHosts(t, "rtt=1ms")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	raw, err := runStandby(ctx, env, tinyStandby, watch{}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := figures(t, raw)
	if raw.Counts["address_move_virtual_ip"] != 1 {
		t.Errorf("counts %v: want a virtual IP moved", raw.Counts)
	}
	if got["grants_dialled_before_move"] < 1 || got["grants_dialled_after_move"] < 1 {
		t.Errorf("grants dialled before the move %v, after %v: want both servers granting", got["grants_dialled_before_move"], got["grants_dialled_after_move"])
	}
	if got["double_grants"] < 1 {
		t.Errorf("double grants %v of %d shared grants", got["double_grants"], raw.Counts["shared_grants"])
	}
}

// The watcher moves the address when the fall-th check in a row has
// failed: with a lost server every check times out at the interval, so D
// is (fall+1) intervals less the fault's phase against the checks; a
// single failed check moves nothing.
func TestWatchTiming(t *testing.T) {
	w := watch{interval: 100 * time.Millisecond, fall: 2}
	for _, phase := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 90 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			fault := time.Now().Add(5*w.interval + phase)
			lost := func(ctx context.Context) bool {
				if time.Now().Before(fault) {
					return true
				}
				<-ctx.Done()
				return false
			}
			var checks checkLog
			var movedAt time.Time
			w.run(t.Context(), lost, checks.add, func() { movedAt = time.Now() })
			if got, _ := checks.phase(fault); got != phase {
				t.Errorf("phase %v, want %v", got, phase)
			}
			if d, want := movedAt.Sub(fault), w.expected()-phase; d != want {
				t.Errorf("phase %v: D %v, want %v", phase, d, want)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		blip := time.Now().Add(5 * w.interval)
		once := func(ctx context.Context) bool {
			if now := time.Now(); now.Before(blip) || now.After(blip) {
				return true
			}
			<-ctx.Done()
			return false
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*w.interval)
		defer cancel()
		moved := false
		w.run(ctx, once, func(time.Time) {}, func() { moved = true })
		if moved {
			t.Error("one failed check moved the address")
		}
	})
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
	if _, ok := got["detection_ms"]; ok {
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
	// Both shared grants came before the fault, with tokens below the
	// steady load's.
	sh.events = []grantEvent{{attempt: at(195), at: at(200)}, {attempt: at(295), at: at(300)}}
	sh.longLost = []time.Time{at(900), at(1300), at(1700)}
	ft := faultTimes{start: t0, fault: at(1000), faultDone: at(1001), restart: at(1500), up: at(1500), end: at(2000)}
	got := figures(t, standbyRaw(tl, sh, ft, 2*time.Second, true))
	want := map[string]float64{
		// D and the holder's stop from the fault in effect, at 1001 ms.
		"detection_ms": 499, "fault_took_ms": 1, "unavailable_ms": 610, "gap_over_d": 610.0 / 499, "holder_stop_ms": 299, "holder_stop_limit_ms": 1600,
		"double_grants": 1, "unsafe_writes_fenced": 1, "unsafe_writes_unfenced": 1, "fenced_rejections": 1,
		// b's write is refused although no later grant superseded b.
		"owner_writes_rejected":      1,
		"grants_dialled_before_move": 1, "grants_dialled_after_move": 30, "tokens_monotonic": 1,
		// The last grant before the fault at 990 ms, the first after the
		// move at 1600 ms; after the move 31 grants in 0.5 s against 99
		// in the second before the fault.
		"takeover_ms": 610, "grant_rate_after_ratio": 62.0 / 99,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 0.01 {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, v)
		}
	}
	if _, ok := got["restart_ms"]; ok {
		t.Error("a standby variant reports a restart time")
	}
	if _, ok := got["tokens_promise_broken"]; ok {
		t.Error("tokens_promise_broken for a takeover within the second, outside the promise")
	}
}
