package scenarios

// The chaos scenario, in the manner of Jepsen: K client processes
// (package holder's chaos mode) contend for one lock and, under it, read
// and write a register and increment a counter in a fenced and an
// unfenced guarded store, while the nemesis (bench/faults/nemesis) injects
// a seeded schedule of random faults: client pauses past the lease,
// client host loss and one-sided partitions (each client reaches the lock
// servers through its own fault-proxy links), server kills with a
// restart, server pauses, and wall-clock steps on servers that expire
// leases on one; a client fault strikes the client that holds the lock
// at its start (the clients say when they hold). Every client records its operations into its own
// history file; the nemesis records the faults; the harness reads the
// counters at the end. The files are merged into one history
// (histories/<contender>.jsonl in the run folder) and checked (package
// check): mutual exclusion, token order, linearizability of each store's
// register, stale writes accepted, the holder's writes refused, writes
// after the lost notice, lost updates; rates carry Wilson intervals with
// the faults as trials.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/faults/nemesis"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
)

// ChaosSoak is the chaos scenario's variant: one mixed-fault run.
const ChaosSoak = "soak"

// Defaults of the chaos scenario.
const (
	// DefaultChaosClients is the number of client processes.
	DefaultChaosClients = 5
	// chaosTailLeases is the quiet time after the last fault healed, in
	// leases: the clients settle and work again before they are stopped.
	chaosTailLeases = 1
	// chaosOverhead is what a step costs besides the schedule and the
	// tail, for the ETA: starting and stopping the clients and any
	// clock-shifted servers, merging and checking (measured in quick
	// runs: under a second on the local backend, a few seconds on
	// containers); chaosClockOverhead is added when the schedule has clock
	// steps, whose clock-shifted servers start for the step (full steps
	// took about 80s for spans of 68s on average with a 2s tail).
	chaosOverhead      = 3 * time.Second
	chaosClockOverhead = 7 * time.Second
	// HistoriesDir is the folder of the run folder that holds the merged
	// histories and porcupine's visualisations.
	HistoriesDir = "histories"
)

// ChaosConfig configures the chaos scenario.
type ChaosConfig struct {
	// Holder starts the client processes (the bench binary's holder
	// subcommand). Required.
	Holder holder.Command
	// Seed seeds the fault schedule; every contender of the run gets the
	// schedule it gives. Zero draws one at random when Scenario is called
	// (the settings record it, so the run can be repeated with it).
	Seed uint64
	// Clients is the number of client processes; zero means
	// DefaultChaosClients.
	Clients int
	// Duration, when positive, scales the full run's fault counts so that
	// the schedule spans about that long (a longer soak: `make chaos
	// DURATION=30m`); it applies to quick runs too.
	Duration time.Duration
	// Faults, when positive, makes the run a soak: every contender's
	// schedule has Faults faults of the kinds every contender can take,
	// spread evenly over them, plus clock steps in the full run's
	// proportion (nemesis.FullCounts: 4 to 22), which only contenders with
	// a movable wall clock take and the others record as skipped. It
	// overrides Duration and the quick counts.
	Faults int
	// Parallel, when above 1, runs the contenders' steps side by side, at
	// most Parallel at once; contenders that share a server role run one
	// after another, since a server fault of one would strike the other.
	// Zero or 1: one after another.
	Parallel int
	// QuickFaults, when positive, is the number of faults of a quick
	// run's schedule, spread over the kinds every contender can take in
	// their order (client pause, client host loss, ...), without a clock
	// step: the suite's time budget. Zero: one fault of each kind.
	QuickFaults int
}

func (c ChaosConfig) clients() int {
	if c.Clients > 0 {
		return c.Clients
	}
	return DefaultChaosClients
}

// counts returns the fault counts of a run: one of each kind when quick,
// else enough for the full run's upper bound, scaled up to Duration.
func (c ChaosConfig) counts(lease time.Duration, quick bool) map[nemesis.Kind]int {
	full := nemesis.FullCounts()
	applicable := full[nemesis.ClientPause] + full[nemesis.ClientHostLoss] + full[nemesis.ClientPartition] + full[nemesis.ServerKill] + full[nemesis.ServerPause]
	if c.Faults > 0 {
		return nemesis.CountsFor(c.Faults, int(math.Round(float64(c.Faults*full[nemesis.ClockStep])/float64(applicable))))
	}
	counts := full
	if quick {
		counts = nemesis.QuickCounts()
		if c.QuickFaults > 0 {
			counts = nemesis.CountsFor(c.QuickFaults, 0)
		}
	}
	if c.Duration <= 0 {
		return counts
	}
	s, err := nemesis.Plan(nemesis.DefaultConfig(c.Seed, lease, c.clients(), nemesis.FullCounts()))
	if err != nil || s.Span() <= 0 {
		return counts
	}
	scale := float64(c.Duration) / float64(s.Span())
	return nemesis.CountsFor(max(1, int(math.Round(float64(applicable)*scale))), max(1, int(math.Round(float64(full[nemesis.ClockStep])*scale))))
}

// schedule plans the run's schedule for lease: the same for every
// contender, since it depends on the config and the lease alone.
func (c ChaosConfig) schedule(lease time.Duration, quick bool) (nemesis.Schedule, error) {
	return nemesis.Plan(nemesis.DefaultConfig(c.Seed, lease, c.clients(), c.counts(lease, quick)))
}

// randomSeed draws a non-zero seed.
func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return max(binary.LittleEndian.Uint64(b[:]), 1)
}

// chaosNoHandover voids a chaos capability for a lock that never handed
// the lock over while a client fault struck its holder (it kept the lock
// through every one, as PostgreSQL's session does through a pause): its
// zero stale writes and double holders come from never granting, not
// from telling the old holder.
var chaosNoHandover = []results.ClaimGuard{{Metric: results.ChaosMetrics.NoHandoverDuringHolderFault.Name, Label: "did not grant"}}

// ChaosName is the chaos scenario's name.
const ChaosName = "chaos"

// Scenario returns the chaos scenario: variant soak, metrics faults,
// operations, double_holders, double_holders_running (the overlaps whose
// earlier holder was not frozen through them: a frozen holder's are
// inherent to a lease), stale_writes_fenced, stale_writes_unfenced,
// lost_updates (counts), linearizable_fenced, linearizable_unfenced (1 =
// linearizable), violation_rate_hi (ratio), and besides double_holder_ms,
// lost_updates_<store>, violation_rate_hi_<store>, grant_gap_max (ms),
// faults_on_holder and lock_kept_through_fault (counts: client faults
// that struck the holder, and those through which no other client was
// granted), no_handover_during_holder_fault (1 when that was every one:
// the lock was never handed over under a fault, so zero stale writes and
// double holders say nothing good), and per fault kind faults_<kind> and
// violation_rate_hi_<kind>; for a contender with HeldOnServer,
// stranded_lock (count) and stranded_ms (ms). Floors
// do not take part; the waiting-strategy variants (ContendedOnly) are
// skipped with the reason. One repetition at most.
func (cfg ChaosConfig) Scenario() bench.Scenario {
	if cfg.Seed == 0 {
		cfg.Seed = randomSeed()
	}
	cm := results.ChaosMetrics
	metrics := cm.List()
	for _, k := range nemesis.Kinds {
		metrics = append(metrics, cm.FaultsUnder(string(k)), cm.ViolationRateUnder(string(k)))
	}
	return bench.Scenario{
		Name:    ChaosName,
		Title:   "Chaos: random faults, recorded histories, checkers",
		Metrics: metrics,
		Decides: []results.DecisionFigure{
			{ID: "fenced-store", Text: "fenced store accepted no stale write under random faults (chaos checkers)", Variant: ChaosSoak, Metric: cm.StaleWritesFenced.Name, Counts: "stale writes accepted", Op: results.AtMost, Void: chaosNoHandover, Without: &results.ClaimGuard{Metric: cm.StaleWritesUnfenced.Name, Label: "no fencing tokens"}},
			// Its own capability, not learns-first (the safety host-loss
			// margin): a holder frozen past its lease cannot learn, with
			// any lease, so only overlaps with a running holder count.
			{ID: "no-running-double-holder", Text: "no running client believed it held the lock while another was granted it, under random faults (chaos checkers; a holder frozen by a pause is not counted)", Variant: ChaosSoak, Metric: cm.DoubleHoldersRunning.Name, Counts: "running double holders", Op: results.AtMost, Void: chaosNoHandover},
		},
		Settings: cfg.settings,
		Variants: func(quick bool) []bench.Variant {
			est := chaosOverhead + chaosTailLeases*assumedLease
			if s, err := cfg.schedule(assumedLease, quick); err == nil {
				est += s.Span()
			}
			if cfg.counts(assumedLease, quick)[nemesis.ClockStep] > 0 {
				est += chaosClockOverhead
			}
			skip := func(c bench.Contender) string {
				if c.ContendedOnly {
					return "a waiting-strategy variant: the lock and its safety are its base contender's (its retry delay changes how it waits, not what it guarantees); left out of chaos, where each step costs a whole schedule"
				}
				return ""
			}
			v := bench.Variant{
				Name: ChaosSoak, Contended: true, Estimate: est, MaxRepetitions: 1, Skip: skip,
				// A soak (make bench-chaos) has its own budget, not the suite's.
				OwnBudget: cfg.Faults > 0,
				Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
					return cfg.run(ctx, env, quick)
				},
			}
			if cfg.Parallel > 1 {
				// Estimate is per contender: the side by side share of a step.
				v.Estimate /= time.Duration(cfg.Parallel)
				v.Interleaved = func(ctx context.Context, envs []*bench.Env) ([]results.Raw, []error) {
					return cfg.sideBySide(ctx, envs, skip, quick)
				}
			}
			return []bench.Variant{v}
		},
	}
}

func (cfg ChaosConfig) settings(quick bool) results.Settings {
	counts := cfg.counts(assumedLease, quick)
	var parts []string
	total := 0
	for _, k := range nemesis.Kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		total += counts[k]
	}
	span := "?"
	if s, err := cfg.schedule(assumedLease, quick); err == nil {
		span = s.Span().Round(100 * time.Millisecond).String()
	}
	set := results.Settings{
		"seed":          strconv.FormatUint(cfg.Seed, 10) + " (--chaos-seed; the schedule is the same for every contender of the run, and for any run with the same seed, lease, clients and counts)",
		"clients":       strconv.Itoa(cfg.clients()) + " separate OS processes (the bench binary's holder subcommand in chaos mode) on one lock key; each reaches the lock servers through its own links of an embedded fault proxy, and the guarded stores directly",
		"faults":        fmt.Sprintf("%d scheduled: %s; a kind the contender or backend cannot do is skipped and recorded so; a client fault strikes the client holding the lock at its start (the schedule's client when none holds, or when another fault acts on the holder): a fault on a waiter tests little", total, strings.Join(parts, ", ")),
		"schedule":      "nemesis.DefaultConfig: client pause, host loss, partition 1.25-1.75 leases; server kill down 0.25-0.75 leases then restart; server pause 0.5-1.5 leases; clock step +2-4 leases held 0.5-1 lease; settle 0.25-0.5 leases; 30% of faults start inside the previous one, at most 2 at once; the schedule spans " + span + " at a 2s lease",
		"work":          "under the lock, on the fenced then the unfenced store: read the register, write <client>-<n> to it, increment the counter (read it, wait, write it plus one); every store operation carries the grant's token when the contender has one; Lost checked before each operation and again between an increment's read and its write (found closed there, the increment fails and its write is not sent); a write that leaves after the client's own lost notice (the notice came after the check) is counted in " + results.ChaosMetrics.WritesAfterLost.Name + "; hold 0.1-0.3 lease, one hold in five 1-2 leases (kept by the lock's keep-alive: a critical section a host loss or partition can outlast the lease in), the operations spread over it; think 0.05-0.15 lease after a release (seeded per client)",
		"stores":        "two guarded stores in the bench (HTTP on 127.0.0.1), a register and a counter each, each with its own high-water mark: fenced (rejects a write, or a read, whose token is lower than the highest it took, and one without a token; a read's token raises the mark, so the new holder's first read fences the old holder out) and unfenced (takes everything)",
		"history":       "every invocation and completion on CLOCK_MONOTONIC, one file per client, merged into histories/<contender>.jsonl in the run folder (format in bench/README.md); a timeout is info (unknown outcome), a refusal fail",
		"checkers":      "mutual exclusion (holds from grant to release invocation or lost notice; an overlap whose earlier holder was frozen by a client pause through it, give or take " + check.ResumeGrace.String() + " to run again, is inherent to a lease, the others are double_holders_running), porcupine linearizability of each register against its store's model, stale writes accepted (after another client's newer grant: grants ordered by real time, one newer than another when its acquire was invoked after the other's completed; only concurrent acquires ordered by token, and not across a server kill, else by completion), grants whose token is not above that of a grant released before they were asked for (" + results.ChaosMetrics.TokenOrderViolations.Name + "), the current holder's writes the fenced store refused (" + results.ChaosMetrics.HolderWritesRefusedFenced.Name + "), writes that left after the writer's lost notice (" + results.ChaosMetrics.WritesAfterLost.Name + "), lost acknowledged increments; each running double holder classified by the servers' own record of the lock's key (server events in the history, from the contender's watcher, whose record says how it watches: server_record), the server's grant matched to the client's by token when the record carries one, else to the grant the watcher saw from the client's acquire to " + check.GrantMatchSlack.String() + " after its completion, the one nearest the completion: " + results.ChaosMetrics.OverlapsServerEarly.Name + " when, on any server that granted the second holder, its record shows no end of the first hold before that grant, or an expiry more than " + check.ExpiryTolerance.String() + " before the last renewal's read-back TTL ran out; " + results.ChaosMetrics.OverlapsBoth.Name + " when that expiry was early and the first holder also believed past the due time; " + results.ChaosMetrics.OverlapsClientLate.Name + " when the server ended the first hold on time and granted after it, the first holder's lost notice coming after that grant; " + results.ChaosMetrics.OverlapsUnclassified.Name + " when no server record covers it (the contender records none, or the watch broke between the grants); violations attributed to the faults active in their cause window on the clients involved or on a server (an overlap under a frozen holder to the pause alone); rates: faults with a violation of all applied faults, Wilson 95%",
		"server_record": "where the contender has a watcher of its servers (one per server, or one over a cluster's replicated log), their grants, renewals and ends of the lock's key are server events of the history, stamped when received; each contender's record says how (server_record) or why not (no_server_record), and the report names the locks it could classify",
		"stranded":      "contenders whose servers keep their own record of held locks (HeldOnServer): once every client stopped, the step's lock is read on the servers every " + strandedPoll.String() + " for up to " + strandedWait.String() + "; stranded_lock = 1 when it was still held then, stranded_ms = when it went (the wait when it stayed)",
		"tail":          strconv.Itoa(chaosTailLeases) + " lease after the last fault healed, then the clients are stopped (SIGCONT, EOF on stdin, SIGKILL after " + holder.DefaultCloseGrace.String() + ") and the harness reads each counter",
		"clock_steps":   "contenders whose servers expire leases on a wall clock read through libc run the whole step on servers started under the clockshift interposer; the others skip clock steps",
		"repetitions":   "1 (each step runs a whole schedule; a longer run is a longer schedule: --chaos-duration, make chaos DURATION=30m)",
		"contenders":    "every lock; the waiting-strategy variants (-spin) are skipped: their lock and its safety are their base contender's, and each step costs a schedule",
		"budget":        "a step takes the schedule's span plus a lease of tail and a few seconds: measured about 80s per contender in a full run (spans 53-83s, 68s on average, at a 2s lease) and 19-26s in a quick run, on the containers backend of a 2-core machine; so one repetition, and only the locks above",
	}
	if quick && cfg.QuickFaults > 0 && cfg.Duration <= 0 {
		set["quick_faults"] = strconv.Itoa(cfg.QuickFaults) + " (the suite's time budget: a quick step runs that many faults, the first kinds every contender can take, and no clock step; one of each kind took 19-26s per contender under load)"
	}
	if cfg.Faults > 0 {
		set[results.ChaosSoakSetting] = fmt.Sprintf("%d faults per contender of the kinds every contender takes, and %d clock steps, which only contenders whose servers expire leases on a movable wall clock take (the others record them as skipped): one schedule for all, spanning %s, %s per fault (--chaos-faults, make bench-chaos)",
			total-counts[nemesis.ClockStep], counts[nemesis.ClockStep], span, perFault(cfg, total))
	}
	if cfg.Parallel > 1 {
		set["side_by_side"] = strconv.Itoa(cfg.Parallel) + " contenders' steps at once at most (--chaos-parallel); contenders that share a server role one after another, as a server fault of one would strike the other; each step's record has the CPU time of its clients and servers"
	}
	if cfg.Duration > 0 {
		set["duration"] = cfg.Duration.String() + " (--chaos-duration: the counts scaled so the schedule spans about that long)"
	}
	return set
}

// perFault is the schedule's span per fault at the assumed lease.
func perFault(cfg ChaosConfig, total int) string {
	s, err := cfg.schedule(assumedLease, false)
	if err != nil || total == 0 {
		return "?"
	}
	return (s.Span() / time.Duration(total)).Round(10 * time.Millisecond).String()
}

// chaosTargets are a contender's servers for the step and what cannot be
// done to them.
type chaosTargets struct {
	servers []nemesis.Server
	running []bench.Server // the same servers, for their CPU time
	clocks  []nemesis.ClockServer
	addrs   []string
	cannot  map[nemesis.Kind]string
	stop    func()
}

// targets returns the servers the step runs on: for a contender whose
// servers expire leases on a wall clock, servers of its spec started
// under the clock interposer, which serve as the step's servers and
// clocks alike; else the contender's own, with clock steps skipped.
func chaosServers(ctx context.Context, env *bench.Env) (chaosTargets, error) {
	t := chaosTargets{cannot: map[nemesis.Kind]string{}, stop: func() {}}
	spec := env.Contender.Server
	own := func(why string) (chaosTargets, error) {
		for _, s := range env.Servers {
			t.servers = append(t.servers, s)
		}
		t.running = env.Servers
		t.addrs = env.Addrs
		t.cannot[nemesis.ClockStep] = why
		return t, nil
	}
	if !spec.WallClockExpiry {
		return own("the server does not expire leases on a wall clock a clock interposer can move (monotonic leases, or a static binary)")
	}
	shifter, ok := env.Deployment.(bench.ClockShifter)
	if !ok {
		return own("the backend cannot start servers under a clock interposer")
	}
	servers, stop, err := shifter.StartClockShifted(ctx, spec)
	if errors.Is(err, bench.ErrNotSupported) {
		return own(err.Error())
	}
	if err != nil {
		return t, fmt.Errorf("chaos: starting clock-shifted servers: %w", err)
	}
	t.stop = stop
	for _, s := range servers {
		t.servers = append(t.servers, s)
		t.clocks = append(t.clocks, s)
		t.running = append(t.running, s)
		t.addrs = append(t.addrs, s.Addr())
	}
	return t, nil
}

// chaosStep is the state of one contender's chaos step.
type chaosStep struct {
	env              *bench.Env
	key              string
	fenced, unfenced *guardedstore.Server
	dir              string // the step's own files: per-client and nemesis histories
	errs             []string
	cpu              *results.ChaosCPU
}

func (s *chaosStep) note(err error) { s.errs = load.NoteError(s.errs, err.Error()) }

// run runs one contender's chaos step.
func (cfg ChaosConfig) run(ctx context.Context, env *bench.Env, quick bool) (results.Raw, error) {
	if cfg.Holder.Path == "" {
		return results.Raw{}, errors.New("chaos: no holder command configured")
	}
	sched, err := cfg.schedule(env.Lease, quick)
	if err != nil {
		return results.Raw{}, err
	}
	s := &chaosStep{env: env, key: "chaos-" + randomHex()}
	if s.dir, err = os.MkdirTemp("", "monolock-bench-chaos-"); err != nil {
		return results.Raw{}, fmt.Errorf("chaos: %w", err)
	}
	defer os.RemoveAll(s.dir)
	if s.fenced, err = guardedstore.Listen("", true); err != nil {
		return results.Raw{}, err
	}
	defer s.fenced.Close()
	if s.unfenced, err = guardedstore.Listen("", false); err != nil {
		return results.Raw{}, err
	}
	defer s.unfenced.Close()
	targets, err := chaosServers(ctx, env)
	if err != nil {
		return results.Raw{}, err
	}
	defer targets.stop()

	begin := time.Now()
	outcomes, err := s.soak(ctx, cfg, sched, targets)
	if err != nil {
		return results.Raw{}, err
	}
	h, err := s.history()
	if err != nil {
		return results.Raw{}, err
	}
	raw, err := s.record(h, sched, outcomes)
	if err != nil {
		return results.Raw{}, err
	}
	if held := env.Contender.HeldOnServer; held != nil {
		// The clients have stopped: does the lock outlive them?
		n, watched, err := watchStranded(ctx, held, targets.running, []string{s.key})
		if err != nil {
			return results.Raw{}, err
		}
		cm := results.ChaosMetrics
		raw.Metrics = append(raw.Metrics, cm.StrandedLock.Of(float64(n)), cm.StrandedMs.Of(float64(watched)/float64(time.Millisecond)))
	}
	raw.Seconds = time.Since(begin).Seconds()
	return raw, nil
}
