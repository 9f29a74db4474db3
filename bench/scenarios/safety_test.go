package scenarios

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/results"
)

// safetyContenders are the rows the smoke test runs (safetyLocks) and
// their server specs.
func safetyContenders(t *testing.T) ([]bench.Contender, []*bench.ServerSpec) {
	t.Helper()
	cs := safetyLocks()
	specs, err := bench.Specs(cs)
	if err != nil {
		t.Fatal(err)
	}
	return cs, specs
}

// onlyVariants returns s running only the variants named.
func onlyVariants(s bench.Scenario, names ...string) bench.Scenario {
	all := s.Variants
	s.Variants = func(quick bool) []bench.Variant {
		var vs []bench.Variant
		for _, v := range all(quick) {
			if slices.Contains(names, v.Name) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	return s
}

// TestSafetySmoke runs the safety scenario with real faults — a holder
// process frozen with SIGSTOP, a holder's packets blackholed by the fault
// proxy, a Redis master's wall clock stepped by the clockshift interposer
// — on the local backend and, when a Docker engine answers, on the
// containers backend, and checks what the stores' histories show.
func TestSafetySmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the safety scenario's faults on real servers: not under -short (make test runs it)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := holder.Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}
	const lease = 600 * time.Millisecond
	for _, backend := range []string{"local", "containers"} {
		t.Run(backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cs, specs := safetyContenders(t)
			var d bench.Deployment
			if backend == "local" {
				d = benchtest.Start(t, specs...)
			} else {
				cd, err := containers.Start(ctx, specs)
				if errors.Is(err, engine.ErrNoEngine) && os.Getenv("CI") == "" {
					t.Skip("no Docker engine answers:", err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer cd.Close()
				d = cd
			}
			// A clock step can land inside the holder's extension and be
			// absorbed (not_granted; about one trial in 30 under load), so
			// the clock jumps get three trials: at least one double
			// grant is then all but certain.
			faults := runScenario(ctx, t, onlyVariants(SafetyConfig{Holder: cmd, Trials: 2}.Scenario(), Pause, HostLoss), cs, d, lease)
			jumps := runScenario(ctx, t, onlyVariants(SafetyConfig{Holder: cmd, Trials: 3}.Scenario(), ClockJump, ClockJumpQuorum), cs, d, lease)
			res := &results.Results{Raw: append(faults.Raw, jumps.Raw...)}
			fig := map[string]float64{}
			for _, raw := range res.Raw {
				for _, m := range raw.Metrics {
					fig[raw.Variant+"/"+raw.Contender+"/"+m.Name] = m.Value
				}
				if len(raw.Errors) > 0 {
					t.Logf("%s/%s: %v", raw.Variant, raw.Contender, raw.Errors)
				}
			}
			t.Logf("figures: %v", fig)
			tokens := map[string]bool{"monolock": true, "redis-incr": true}
			for _, c := range cs {
				// Pause: A writes after B's grant every time; only a
				// token stops the write at a fenced store.
				p := "pause/" + c.Name + "/"
				if fig[p+"trials"] != 2 || fig[p+"unsafe_writes_unfenced"] != 2 || fig[p+"double_grants"] != 2 {
					t.Errorf("%s: trials %v, unsafe unfenced %v, double grants %v; want 2 each", c.Name, fig[p+"trials"], fig[p+"unsafe_writes_unfenced"], fig[p+"double_grants"])
				}
				// ... but only once A's lease ran out: no second holder
				// within half a lease of the freeze.
				if n, ok := fig[p+"early_grants"]; !ok || n != 0 {
					t.Errorf("%s pause: early grants %v (recorded %v), want 0", c.Name, n, ok)
				}
				if tokens[c.Name] && (fig[p+"unsafe_writes_fenced"] != 0 || fig[p+"fenced_rejections"] != 2) {
					t.Errorf("%s pause fenced: unsafe %v, rejected %v; want 0 and 2", c.Name, fig[p+"unsafe_writes_fenced"], fig[p+"fenced_rejections"])
				}
				// Host loss: B was granted (so the blackhole silenced A)
				// and A learned; fencing never lets a stale write in.
				h := "host-loss/" + c.Name + "/"
				if _, ok := fig[h+"learn_first_margin_min"]; !ok || fig[h+"trials"] != 2 {
					t.Errorf("%s host-loss: no margin or trials %v", c.Name, fig[h+"trials"])
				}
				if tokens[c.Name] && fig[h+"unsafe_writes_fenced"] != 0 {
					t.Errorf("%s host-loss: %v stale writes reached the fenced store", c.Name, fig[h+"unsafe_writes_fenced"])
				}
			}
			// Clock jumps: B was granted while A's watchdog kept its key
			// alive, so the step expired it; A had not been told yet in
			// at least one of three trials (it learns at its next
			// extension, a third of the TTL later). A trial whose step was
			// absorbed grants nothing and doubles nothing.
			for _, k := range []string{"clock-jump/redis", "clock-jump/redis-incr", "clock-jump-redlock/redlock"} {
				trials, doubles, absorbed := fig[k+"/trials"], fig[k+"/double_grants"], fig[k+"/not_granted"]
				if trials != 3 || doubles < 1 || doubles+absorbed > trials {
					t.Errorf("%s: trials %v, double grants %v, not granted %v; want 3 trials, at least 1 double grant, and no more of both than trials", k, trials, doubles, absorbed)
				}
			}
			if fig["clock-jump/redis-incr/unsafe_writes_fenced"] != 0 {
				t.Errorf("clock-jump/redis-incr: a stale write reached the fenced store")
			}
			if _, ok := fig["clock-jump/monolock/trials"]; ok {
				t.Error("clock-jump ran for monolock, whose server keeps no wall-clock leases")
			}
			if !slices.ContainsFunc(skips(jumps), func(n string) bool { return strings.HasPrefix(n, "safety/clock-jump/monolock skipped: ") }) {
				t.Errorf("no skipped record for clock-jump/monolock in %q", skips(jumps))
			}
		})
	}
}
