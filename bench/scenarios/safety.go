package scenarios

// The safety scenario: does a lock keep two holders apart when the holder
// stalls, loses its host or the server's clock jumps, and what does a
// fenced resource change? Each trial has a holder A and a second client
// B on one fresh key; both write to two guarded stores (bench/faults/guardedstore)
// in the bench, one fenced and one unfenced, A's writes carrying its
// grant's token when the contender has one. Afterwards the stores'
// histories are analysed against the grant timeline (all on the host's
// CLOCK_MONOTONIC): unsafe writes (accepted from A after B's grant),
// writes rejected by fencing, and double grants (B granted while A still
// believed it held the lock).
//
// Variants:
//   - pause: A is a separate OS process (package holder); after its first
//     write it is frozen (SIGSTOP), B acquires (once the lease ran out) and
//     writes, then A is resumed and writes at once — it checked its lock
//     before the pause (Kleppmann's GC-pause story). A grant to B within
//     half a lease of the freeze is early: no lease ran out. Where the
//     servers keep their own record of held locks, the trials' locks are
//     watched there once every client closed (stranded).
//   - host-loss: A runs in the bench but reaches the lock servers only
//     through its own fault-proxy links (bench/faults/faultproxy), which are
//     blackholed: its packets are dropped, nothing is reset. A keeps
//     writing to the stores over its own, unaffected path while it
//     believes it holds the lock; B acquires. The margin is B's grant −
//     the moment A learned it lost the lock (Held.Lost): negative means A
//     still believed after B got the lock.
//   - clock-jump: a single server that expires leases on its wall clock is
//     started under the clockshift interposer; while A holds, its clock
//     steps forward by more than the TTL; B acquires and writes; A, not
//     yet told, writes.
//   - clock-jump-redlock: the same on independent masters with Kleppmann's
//     sequence: A reaches only masters 1–3 (per-client proxy views) and
//     takes them; master 3's clock jumps and its key expires; B reaches
//     only masters 3–5 and takes them; both write.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aclements/go-moremath/stats"
	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/faults/holder"

	"github.com/monolock/monolock-bench/bench/results"
)

// Safety variants.
const (
	Pause           = "pause"
	HostLoss        = "host-loss"
	ClockJump       = "clock-jump"
	ClockJumpQuorum = "clock-jump-redlock"
)

// Trial counts of the safety scenario, per variant and repetition.
const (
	DefaultSafetyTrials      = 2
	DefaultQuickSafetyTrials = 1
	// faultRepetitions caps the repetitions of pause and host-loss in a
	// full run (every trial waits a lease, a lock without one the whole
	// grant bound): 2 × 2 = 4 trials per contender.
	faultRepetitions = 2
)

// Timing of a safety trial.
const (
	// hostLossWriteEvery is how often a host-loss holder writes while it
	// believes it holds the lock.
	hostLossWriteEvery = 50 * time.Millisecond
	// jumpLeases is the clock step in leases: more than any remaining TTL.
	jumpLeases = 3
	// storeTimeout bounds one write to a guarded store.
	storeTimeout = 5 * time.Second
	// overheadSamples is the number of round trips timed per path when
	// measuring the fault proxy's own cost.
	overheadSamples = 2000
)

// SafetyConfig configures the safety scenario.
type SafetyConfig struct {
	// Holder starts the holder child process of the pause variant (the
	// bench binary's holder subcommand). Required for pause.
	Holder holder.Command
	// Trials per variant and repetition; zero means DefaultSafetyTrials,
	// or DefaultQuickSafetyTrials in a quick run.
	Trials int
}

func (c SafetyConfig) trials(quick bool) int {
	switch {
	case c.Trials > 0:
		return c.Trials
	case quick:
		return DefaultQuickSafetyTrials
	default:
		return DefaultSafetyTrials
	}
}

// Scenario returns the safety scenario with variants pause, host-loss,
// clock-jump and clock-jump-redlock and metrics trials, double_grants,
// unsafe_writes_unfenced, unsafe_writes_fenced, fenced_rejections
// (counts); pause also early_grants and, for a contender with
// HeldOnServer, stranded_locks (counts) and stranded_ms (ms); host-loss
// also learn_first_margin_p50/min (ms) and
// proxy_overhead_p50 (us, what one proxy link adds to a round trip).
// Floors and waiting-strategy variants do not take part.
func (cfg SafetyConfig) Scenario() bench.Scenario {
	sm := results.SafetyMetrics
	faults := map[string]string{Pause: results.FaultPause, HostLoss: results.FaultHostLoss, ClockJump: results.FaultClockJump, ClockJumpQuorum: results.FaultClockJumpQuorum}
	return bench.Scenario{
		Name:    "safety",
		Title:   "Safety: pauses, host loss, clock jumps, fencing",
		Metrics: sm.List(),
		Decides: []results.DecisionFigure{
			{ID: "fenced-store", Text: "fenced store rejected every stale write (a holder paused past its lease, then wrote)", Variant: Pause, Metric: sm.UnsafeWritesFenced.Name, Counts: "stale writes accepted", Op: results.AtMost, Void: notGranted, Without: &results.ClaimGuard{Metric: sm.UnsafeWritesUnfenced.Name, Label: "no fencing tokens"}},
			// A lease lock hands the frozen holder's lock on once its lease
			// ran out, which the fenced store is there for; a grant within
			// half a lease of the freeze is no expiry: every lock here
			// renews at least every third of a lease (the handover's freeze
			// trials never freed one in under 0.7 lease).
			{ID: "no-early-grant", Text: "no second holder while a frozen holder's lease still ran (pause: no grant within half a lease of the freeze)", Variant: Pause, Metric: sm.EarlyGrants.Name, Counts: "a second holder within half a lease", Of: sm.Trials.Name, Op: results.AtMost},
			{ID: "learns-first", Text: "holder learns it lost the lock before the next grant (its host vanished; by 1 ms at least, beyond clock resolution)", Variant: HostLoss, Metric: sm.LearnFirstMarginMin.Name, Counts: "learn-first margin", Op: results.AtLeast, Than: results.ClaimBound{Value: 1}, Void: notGranted, Fail: []results.ClaimGuard{{Metric: sm.NeverLearned.Name, Label: "trials where the old holder never learned"}}},
			{ID: "learn-first-margin", Text: "smallest learn-first margin after a host loss", Variant: HostLoss, Metric: sm.LearnFirstMarginMin.Name, Void: notGranted},
		},
		Settings: func(quick bool) results.Settings {
			return results.Settings{
				"trials":             strconv.Itoa(cfg.trials(quick)) + " per variant, contender and repetition (pause and host-loss: at most " + strconv.Itoa(faultRepetitions) + " repetitions); one fresh key per trial",
				"stores":             "two guarded stores in the bench (HTTP on 127.0.0.1): fenced (rejects a token lower than the highest accepted for the lock) and unfenced; every write goes to both, a contender without tokens writes to the unfenced one only",
				"timeline":           "grants and writes on the host's CLOCK_MONOTONIC; a grant's start is when the client's acquire returned",
				"pause":              "A: separate OS process; acquires, writes, SIGSTOP; B acquires (bench) and writes; A gets SIGCONT and writes at once, without checking its lock (it checked before the pause)",
				"host-loss":          "A: in the bench, its lock traffic through per-client toxiproxy links (embedded) that are blackholed (dropped, not reset); A writes every " + hostLossWriteEvery.String() + " while Lost is open, over its own unaffected path; B acquires directly; margin = B's grant - A's Lost, ms",
				"clock-jump":         "A and B on a separate single server started under the clockshift LD_PRELOAD interposer (wall clock only); while A holds, the server's clock steps +" + strconv.Itoa(jumpLeases) + " leases; B acquires and writes; A writes if its Lost is still open; a step that lands inside one of A's extensions is absorbed (the extension re-arms the TTL on the stepped clock) and the trial counts in not_granted",
				"clock-jump-redlock": "masters started under the interposer; A reaches masters 1-3 only and acquires; master 3's clock steps +" + strconv.Itoa(jumpLeases) + " leases; B reaches masters 3-5 only and acquires; B writes; A writes if its Lost is still open",
				"grant_bound":        "B waits at most 2 leases + 1s (at least " + minGrantBound.String() + ") for its grant, else not_granted; A as long to learn after B's grant, else never_learned",
				"early_grants":       "pause trials where B was granted less than half a lease after A's SIGSTOP: a second holder while A's lease still ran, not an expiry (A's lease is renewed at least every third of a lease, so two thirds of it remain at the freeze)",
				"stranded":           "contenders whose servers keep their own record of held locks (HeldOnServer): once every client of the pause trials closed (A released at its Close, B's client closed), the trials' locks are read on the servers every " + strandedPoll.String() + " for up to " + strandedWait.String() + "; stranded_locks = those still held then, stranded_ms = when the last went (the wait when one stayed)",
				"double_grants":      "B granted while A still believed it held the lock (A's belief ends at Lost, or after its last write when it never learned)",
				"unsafe_writes":      "accepted writes from A after B's grant of the same key",
				"skips":              "clock-jump variants need a server that expires leases on a wall clock read through libc (ServerSpec.WallClockExpiry) and a backend that can start servers under the interposer; the reason is in the run's notes",
			}
		},
		Variants: func(quick bool) []bench.Variant {
			n := cfg.trials(quick)
			var vs []bench.Variant
			for _, v := range []string{Pause, HostLoss, ClockJump, ClockJumpQuorum} {
				// Per trial, averaged over the contender table (measured
				// in quick runs): pause and host-loss ~2.2s for a lease
				// contender, the grant bound (5s) for a lock without one;
				// clock-jump ~1s on the two contenders it applies to,
				// clock-jump-redlock ~4.7s on one; the others skip at once.
				per := assumedLease + 800*time.Millisecond
				reps := 0
				switch v {
				case Pause, HostLoss:
					reps = faultRepetitions
				case ClockJump:
					per = 300 * time.Millisecond
				case ClockJumpQuorum:
					per = 600 * time.Millisecond
				}
				vs = append(vs, bench.Variant{
					Name:           v,
					Params:         results.VariantParams{Workers: 2, Keys: 1, Fault: faults[v], GrantBound: &grantBoundRule},
					Estimate:       time.Duration(n) * per,
					MaxRepetitions: reps,
					Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
						return runSafety(ctx, env, cfg.Holder, v, n)
					},
				})
			}
			return vs
		},
	}
}

// safetyRun is the state of one variant run for one contender.
type safetyRun struct {
	env              *bench.Env
	fenced, unfenced *guardedstore.Server
	// fc and uc are the bench's clients of the stores. A in the bench
	// writes through them too: its path to the stores is not faulted.
	fc, uc *guardedstore.Client

	mu      sync.Mutex // guards the fields below: A's writer runs on its own
	grants  []guardedstore.Grant
	counts  map[string]int // not_granted, never_learned, early_grants
	keys    []string       // the pause trials' keys, for the stranded watch
	margins []float64
	errs    []string
}

// runSafety runs trials of variant for env's contender.
func runSafety(ctx context.Context, env *bench.Env, cmd holder.Command, variant string, trials int) (results.Raw, error) {
	if skip, err := applies(env, cmd, variant); skip != "" || err != nil {
		return results.Raw{Skipped: skip}, err
	}
	s := &safetyRun{env: env, counts: map[string]int{}}
	var err error
	listen := "" // the stores' address: the bench's loopback
	if variant == Pause && env.RemoteClients && env.ClientHost != nil {
		// Holder A runs on a client host of its own (a pod), where its
		// freeze goes through the deployment; it writes to the stores
		// at the bench's address there.
		host, err := env.ClientHost(ctx, "safety-holder")
		if err != nil {
			return results.Raw{}, err
		}
		defer host.Close()
		if remote, ok := host.(bench.RemoteClientHost); ok && remote.BenchHost() != "" {
			cmd = cmd.On(host)
			listen = net.JoinHostPort(remote.BenchHost(), "0")
		}
	}
	if s.fenced, err = guardedstore.Listen(listen, true); err != nil {
		return results.Raw{}, err
	}
	defer s.fenced.Close()
	if s.unfenced, err = guardedstore.Listen(listen, false); err != nil {
		return results.Raw{}, err
	}
	defer s.unfenced.Close()
	s.fc, s.uc = guardedstore.NewClient(s.fenced.Addr()), guardedstore.NewClient(s.unfenced.Addr())
	defer s.fc.Close()
	defer s.uc.Close()

	sm := results.SafetyMetrics
	var raw results.Raw
	begin := time.Now()
	switch variant {
	case Pause:
		if err = s.pause(ctx, cmd, trials); err == nil && env.Contender.HeldOnServer != nil {
			var held int
			var longest time.Duration
			if held, longest, err = watchStranded(ctx, env.Contender.HeldOnServer, env.Servers, s.keys); err == nil {
				raw.Metrics = append(raw.Metrics, sm.StrandedLocks.Of(float64(held)), sm.StrandedMs.Of(float64(longest)/float64(time.Millisecond)))
			}
		}
	case HostLoss:
		var o faultproxy.Overhead
		if o, err = faultproxy.MeasureOverhead(ctx, overheadSamples); err != nil {
			return results.Raw{}, err
		}
		raw.Metrics = append(raw.Metrics, sm.ProxyOverheadP50.Of(float64(o.Added)/float64(time.Microsecond)))
		err = s.hostLoss(ctx, trials)
	case ClockJump, ClockJumpQuorum:
		err = s.clockJump(ctx, variant, trials)
	}
	if err != nil {
		return results.Raw{}, err
	}
	raw.Seconds = time.Since(begin).Seconds()
	raw.Errors = s.errs

	unf := guardedstore.Analyze(s.unfenced.Store.History(), s.grants)
	count := func(m results.MetricSpec, v int) {
		raw.Metrics = append(raw.Metrics, m.Of(float64(v)))
	}
	count(sm.Trials, trials)
	// B never granted within the bound (the lock stayed with the stalled
	// holder), and A never told within the bound after B's grant.
	count(sm.NotGranted, s.counts[sm.NotGranted.Name])
	count(sm.NeverLearned, s.counts[sm.NeverLearned.Name])
	count(sm.DoubleGrants, len(unf.DoubleGrants))
	if variant == Pause {
		count(sm.EarlyGrants, s.counts[sm.EarlyGrants.Name])
	}
	count(sm.UnsafeWritesUnfenced, len(unf.Unsafe))
	raw.Counts = map[string]int64{"trials": int64(trials), "writes_unfenced": int64(unf.Writes)}
	if s.hasTokens() {
		f := guardedstore.Analyze(s.fenced.Store.History(), s.grants)
		count(sm.UnsafeWritesFenced, len(f.Unsafe))
		count(sm.FencedRejections, f.RejectedByFencing)
		raw.Counts["writes_fenced"] = int64(f.Writes)
		raw.Counts["prevented_by_fencing"] = int64(f.Prevented)
	}
	if variant == HostLoss && len(s.margins) > 0 {
		sorted := slices.Sorted(slices.Values(s.margins))
		raw.Metrics = append(raw.Metrics,
			sm.LearnFirstMarginP50.Of(stats.Sample{Xs: sorted, Sorted: true}.Quantile(0.5)),
			sm.LearnFirstMarginMin.Of(sorted[0]),
		)
		raw.Series = append(raw.Series, results.Series{Name: "learn_first_margin", Unit: "ms", Values: s.margins})
	}
	return raw, nil
}

// applies returns why variant cannot run for env's contender on its
// backend, or "" when it can.
func applies(env *bench.Env, cmd holder.Command, variant string) (skip string, err error) {
	spec := env.Contender.Server
	switch variant {
	case Pause:
		if cmd.Path == "" {
			return "", errors.New("safety: no holder command configured")
		}
	case ClockJump, ClockJumpQuorum:
		if !spec.WallClockExpiry {
			return "the server does not expire leases on a wall clock a clock interposer can move (see the contender's notes)", nil
		}
		if variant == ClockJump && spec.Count() != 1 {
			return fmt.Sprintf("%d independent servers; see %s", spec.Count(), ClockJumpQuorum), nil
		}
		if variant == ClockJumpQuorum && spec.Count() < 5 {
			return fmt.Sprintf("Kleppmann's sequence needs five independent servers, the contender has %d", spec.Count()), nil
		}
		if _, ok := env.Deployment.(bench.ClockShifter); !ok {
			return "the backend cannot start servers under a clock interposer", nil
		}
	}
	return "", nil
}

// hasTokens reports whether any grant of the run carried a token.
func (s *safetyRun) hasTokens() bool {
	return slices.ContainsFunc(s.grants, func(g guardedstore.Grant) bool { return g.Token != nil })
}

// storeAddrs are the stores a write with tok goes to: the unfenced one,
// and the fenced one when there is a token.
func (s *safetyRun) storeAddrs(tok *uint64) []string {
	if tok == nil {
		return []string{s.unfenced.Addr()}
	}
	return []string{s.unfenced.Addr(), s.fenced.Addr()}
}

// write sends one write of client on key with tok to the stores: the
// unfenced one, and the fenced one when there is a token.
func (s *safetyRun) write(ctx context.Context, client, key string, tok *uint64) {
	stores := []*guardedstore.Client{s.uc}
	if tok != nil {
		stores = append(stores, s.fc)
	}
	for _, st := range stores {
		wctx, cancel := context.WithTimeout(ctx, storeTimeout)
		_, err := st.Write(wctx, guardedstore.Write{Client: client, Lock: key, Token: tok, Payload: client})
		cancel()
		if err != nil {
			s.note(err)
		}
	}
}

func tokenOf(t uint64, ok bool) *uint64 {
	if !ok {
		return nil
	}
	return &t
}

// errNotGranted is wrapped when B was not granted within the bound while
// ctx was live.
var errNotGranted = errors.New("safety: B not granted")

// acquireWithin acquires key on l within d.
func acquireWithin(ctx context.Context, l bench.Locker, key string, d time.Duration) (bench.Held, check.Mono, error) {
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	h, err := l.Acquire(actx, key)
	at := check.Now()
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, fmt.Errorf("%w within %v: %w", errNotGranted, d, err)
	}
	return h, at, nil
}

// release releases h without waiting long: a holder cut off from its
// servers cannot release.
func release(ctx context.Context, h bench.Held) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = h.Release(rctx)
}

// notGranted voids a safety trial's figures: in a trial whose second
// client was never granted the lock nothing stale could be written, so
// its zero says nothing good.
var notGranted = []results.ClaimGuard{{Metric: results.SafetyMetrics.NotGranted.Name, Label: "did not grant"}}
