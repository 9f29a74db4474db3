package scenarios

// The workload scenario: a user's own lock traffic, stated in a workload
// file (bench/workload), run on every contender by the suite's one load
// generator (load.Run). One variant per workload, named as it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/workload"
)

// Defaults of WorkloadConfig.
const (
	// DefaultWorkloadRepetitions caps the repetitions of every workload
	// variant: the four ready workloads on every lock of the table fit
	// the suite's time budget once each, not three times.
	DefaultWorkloadRepetitions = 1
)

// WorkloadConfig configures the workload scenario. Zero fields take the
// defaults.
type WorkloadConfig struct {
	// Workloads are run in order, one variant each; default the ready
	// workloads (workload.Ready).
	Workloads []WorkloadFile
	// QuickContenders, when set, are the only contenders a quick run
	// measures the ready workloads on (the quick suite runs them on one
	// pair); the others get a record saying so. A user's own workload
	// file runs on every contender. Default: every contender.
	QuickContenders []string
	// MaxRepetitions caps the repetitions of each variant; default
	// DefaultWorkloadRepetitions. Negative: no cap.
	MaxRepetitions int
	// Client starts the workload-client subcommand, the child processes
	// of a workload whose clients are spread over several processes
	// (clients.processes > 1). Without it such a workload is skipped with
	// the reason.
	Client load.Command
}

// WorkloadFile is a workload as workload.Load returns it: the workload
// and the warnings of its file.
type WorkloadFile struct {
	workload.Workload
	Warnings []workload.Warning
}

// ReadyWorkloads returns the ready workloads (workload.Ready).
func ReadyWorkloads() []WorkloadFile {
	var out []WorkloadFile
	for _, name := range workload.Ready() {
		w, ws, err := workload.Load(name)
		if err != nil {
			panic(err) // the embedded files are part of the binary, and tested
		}
		out = append(out, WorkloadFile{w, ws})
	}
	return out
}

func (c WorkloadConfig) withDefaults() WorkloadConfig {
	if len(c.Workloads) == 0 {
		c.Workloads = ReadyWorkloads()
	}
	switch {
	case c.MaxRepetitions == 0:
		c.MaxRepetitions = DefaultWorkloadRepetitions
	case c.MaxRepetitions < 0:
		c.MaxRepetitions = 0
	}
	return c
}

// Workloads is the workload scenario with the ready workloads.
func Workloads() bench.Scenario { return WorkloadConfig{}.Scenario() }

// Scenario returns the workload scenario: per workload and contender, the
// offered and achieved rates, acquire latency from the intended start
// (p50, p99, p99.9), the wait on contended keys (p99), failures,
// coordinator CPU per 1,000 locks and the verdict of the file's SLOs
// (slo_pass), plus the handover on contended keys, coordinator commands
// and client CPU per lock, and lost locks. Floors do not take part: they
// lock nothing.
func (cfg WorkloadConfig) Scenario() bench.Scenario {
	c := cfg.withDefaults()
	return bench.Scenario{
		Name:    "workload",
		Title:   "Workloads: your own lock traffic",
		Metrics: results.WorkloadMetrics.List(),
		Settings: func(quick bool) results.Settings {
			return c.settings(quick)
		},
		Variants: func(quick bool) []bench.Variant {
			var vs []bench.Variant
			for _, w := range c.Workloads {
				vs = append(vs, c.variant(w.Workload, quick))
			}
			return vs
		},
	}
}

func (c WorkloadConfig) settings(quick bool) results.Settings {
	set := results.Settings{
		"engine":       "load.Run, the load generator of every scenario: one continuous run per repetition, warm-up then the window; open loop: a free client takes the next request of the schedule and waits until it is due; closed loop: each client's own plan of keys, holds and think times",
		"clients":      "each client has its own Locker (its own connections, pool or session) and one request at a time",
		"window":       "the measured requests are those whose intended start falls in the window; server CPU, coordinator counters and the bench's CPU are read at both edges",
		"stop":         fmt.Sprintf("after the window the run goes on at the same load until every measured request has its grant or failure, for at most half the window (at most %v); then holds still running are cut (released), waits cancelled and counted as censored at their lower bound, measured requests never started likewise", load.MaxGrace),
		"acquire":      "from the intended start to the grant (coordinated omission corrected); a censored or never started request at its lower bound, the stop minus its intended start; failures are counted, not timed",
		"achieved":     "grants within the window per second of it; offered: requests whose intended start falls in it, per second",
		"wait":         "grant minus call of the measured requests whose key another request held or waited for at the call",
		"handover":     "the next grant minus the previous release on a key, when the next request called before that release; negative when the server granted the next before the holder's Release returned in the bench",
		"per_lock":     "server CPU, client CPU and coordinator commands between the edges divided by the grants between them",
		"calibration":  "open loops: a closed loop of the same clients, keys and holds (no think time) first, on other keys, for 8 mean holds (0.5s to 2s; quick 4, 0.25s to 0.5s) after a warm-up of a mean hold (at most 1s; quick 250ms) that, for holds under 100ms, lasts until every client had a grant; its grants per second in the window are the contender's closed-loop maximum (once per contender per run); a rate close to it or above is warned about in the record, and run anyway; a window shorter than 4 mean holds, or without a grant, leaves the maximum unmeasured, and says so",
		"keys":         "wl-<random>-<index>, fresh for every repetition",
		"slo_pass":     "1 when every threshold of the file was measured and holds, else 0",
		"repetitions":  "the run's repetitions",
		"contenders":   "every lock contender (floors lock nothing and do not take part)",
		"workloads":    workloadNames(c.Workloads),
		"file_clients": "clients.processes > 1 runs the clients in that many child processes of the bench binary (workload-client), each on its share of clients and, for an open loop, of the schedule (every processes-th request), stamped on CLOCK_MONOTONIC and streamed back",
	}
	if c.MaxRepetitions > 0 {
		set["repetitions"] = fmt.Sprintf("at most %d per workload (the suite's time budget), fewer when the run has fewer", c.MaxRepetitions)
	}
	if quick && len(c.QuickContenders) > 0 {
		set["contenders"] = "quick suite: the ready workloads on " + strings.Join(c.QuickContenders, " and ") + " only (the full suite runs every lock), a workload file of your own on every contender"
	}
	for _, w := range c.Workloads {
		p := w.Name + "."
		for k, v := range w.Settings(quick) {
			set[p+k] = v
		}
		set[p+"description"] = w.Describe()
		set[p+"file"] = w.Text
		if len(w.Warnings) > 0 {
			var ws []string
			for _, wn := range w.Warnings {
				ws = append(ws, wn.String())
			}
			set[p+"warnings"] = strings.Join(ws, "\n")
		}
	}
	return set
}

func workloadNames(ws []WorkloadFile) string {
	var names []string
	for _, w := range ws {
		names = append(names, w.Name+" ("+w.Source+")")
	}
	return strings.Join(names, ", ")
}

// contendedShare is the share of requests expected to find their key held
// from which a workload counts as contended: its waiting strategy then
// decides a part of its figures (a spin variant differs from its base).
const contendedShare = 0.01

// contended reports whether w's clients wait for each other's keys often
// enough to matter. Uniform keys at least as many as the clients still
// meet (cron: 32 keys, 24 clients, a third of its runs wait), so the
// estimate decides, not the key count.
func contended(w workload.Workload) bool { return w.ContendedShare() >= contendedShare }

func (c WorkloadConfig) variant(w workload.Workload, quick bool) bench.Variant {
	warmup, window := w.Window(quick)
	calWarmup, calWindow := load.CalibrationWindow(w, quick)
	est := warmup + window + load.WorkloadGrace(window)/2 + openCloseEstimate(w.Clients)
	if w.Arrivals.Loop == workload.Open && calWindow >= minCalibrationHolds*w.Hold.MeanValue() {
		est += calWarmup + calWindow
	}
	cal := &calibrations{max: map[string]float64{}}
	return bench.Variant{
		Name:           w.Name,
		Contended:      contended(w),
		Sessions:       w.Clients,
		Estimate:       est,
		MaxRepetitions: c.MaxRepetitions,
		Skip: func(ct bench.Contender) string {
			switch {
			case quick && w.Ready && len(c.QuickContenders) > 0 && !slices.Contains(c.QuickContenders, ct.Name):
				return "quick suite: the ready workloads run on " + strings.Join(c.QuickContenders, " and ") + " only (the full suite runs every lock)"
			case ct.MaxSessions > 0 && w.Clients > ct.MaxSessions:
				return fmt.Sprintf("%d clients exceed the %d sessions %s can have at once: %s", w.Clients, ct.MaxSessions, ct.Name, ct.MaxSessionsReason)
			case w.Processes > 1 && c.Client.Path == "":
				return "clients.processes > 1 needs the workload-client subcommand of the bench binary"
			}
			return ""
		},
		Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
			return runWorkload(ctx, env, w, quick, cal, c.Client)
		},
	}
}

// openCloseEstimate is the time to open and close a client's Locker per
// client (etcd's sessions weigh most), measured on two cores.
func openCloseEstimate(clients int) time.Duration {
	return 200*time.Millisecond + time.Duration(clients)*10*time.Millisecond
}

// workloadRun is one repetition of a workload on a contender.
type workloadRun struct {
	w       workload.Workload
	env     *bench.Env
	lockers []bench.Locker
	notes   []string
}

func runWorkload(ctx context.Context, env *bench.Env, w workload.Workload, quick bool, cal *calibrations, client load.Command) (results.Raw, error) {
	e := *env
	e.Lease = w.Lease // the workload's own lease, for every contender alike
	r := &workloadRun{w: w, env: &e}
	for _, wn := range r.fileLimits(ctx) {
		r.notes = append(r.notes, wn.String())
	}
	if w.Processes > 1 {
		return r.inProcesses(ctx, quick, cal, client)
	}
	if err := r.open(ctx); err != nil {
		return results.Raw{}, err
	}
	defer r.close()
	share := load.WholeShare(w)
	locker := func(c int) bench.Locker { return r.lockers[c] }
	maxRate, err := r.calibrate(cal, quick, func() (*load.Log, error) {
		return load.Run(ctx, load.CalibrationTraffic(w, quick, share, locker, "wl-cal-"+randomHex()+"-"))
	})
	if err != nil {
		return results.Raw{}, err
	}
	edges, err := newEdges(&e)
	if err != nil {
		return results.Raw{}, err
	}
	defer edges.close()
	t := load.WorkloadTraffic(w, quick, share, locker, "wl-"+randomHex()+"-")
	t.Edge = edges.read
	log, err := load.Run(ctx, t)
	if err != nil {
		return results.Raw{}, err
	}
	return workloadRecord(w, log, edges, maxRate, r.notes)
}

// inProcesses runs the repetition on w.Processes child processes.
func (r *workloadRun) inProcesses(ctx context.Context, quick bool, cal *calibrations, client load.Command) (results.Raw, error) {
	w := r.w
	ps, err := load.StartProcesses(ctx, client, w, load.ProcessSpec{
		Contender: r.env.Contender.Name, Addrs: r.env.Addrs, Lease: r.env.Lease,
		Source: w.Source, Text: w.Text, Quick: quick,
	})
	if err != nil {
		return results.Raw{}, err
	}
	defer ps.Close()
	maxRate, err := r.calibrate(cal, quick, func() (*load.Log, error) {
		warmup, window := load.CalibrationWindow(w, quick)
		log, _, err := ps.Run(ctx, load.Phase{Calibrate: true, KeyPrefix: "wl-cal-" + randomHex() + "-"}, warmup, window, nil)
		return log, err
	})
	if err != nil {
		return results.Raw{}, err
	}
	edges, err := newEdges(r.env)
	if err != nil {
		return results.Raw{}, err
	}
	defer edges.close()
	warmup, window := w.Window(quick)
	log, childCPU, err := ps.Run(ctx, load.Phase{KeyPrefix: "wl-" + randomHex() + "-"}, warmup, window, edges.read)
	if err != nil {
		return results.Raw{}, err
	}
	edges.addSelfCPU(childCPU)
	return workloadRecord(w, log, edges, maxRate, r.notes)
}

// calibrate returns the contender's closed-loop maximum on an open-loop
// workload, measuring it with measure on first use, and notes the
// warning when the rate comes close to it or exceeds it. 0 for a closed
// loop.
func (r *workloadRun) calibrate(cal *calibrations, quick bool, measure func() (*load.Log, error)) (float64, error) {
	if r.w.Arrivals.Loop != workload.Open {
		return 0, nil
	}
	if _, window := load.CalibrationWindow(r.w, quick); window < minCalibrationHolds*r.w.Hold.MeanValue() {
		// Clients that all started at once have not spread out within a
		// few holds: the figure would say more about the start than
		// about the lock, and warn wrongly.
		hold := r.w.Hold.MeanValue()
		r.notes = append(r.notes, fmt.Sprintf("the closed-loop maximum was not measured: its %v window holds fewer than %d mean holds (%v); without any time to acquire, %d clients complete at most %.3g/s",
			window, minCalibrationHolds, hold.Round(time.Millisecond), r.w.Clients, float64(r.w.Clients)/hold.Seconds()))
		return 0, nil
	}
	maxRate, err := cal.closedLoopMax(r.env.Contender.Name, measure)
	if errors.Is(err, errNoGrant) {
		r.notes = append(r.notes, "the closed-loop maximum was not measured: "+err.Error())
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("calibrating the closed-loop maximum: %w", err)
	}
	if wn, ok := r.w.CheckRate(maxRate); ok {
		r.notes = append(r.notes, wn.String())
	}
	return maxRate, nil
}

// fileLimits raises the bench's open-file limit and checks it, and the
// servers' where the backend can read them, against the claims of w.
func (r *workloadRun) fileLimits(ctx context.Context) []workload.Warning {
	var ws []workload.Warning
	perProcess := (r.w.Clients + r.w.Processes - 1) / r.w.Processes
	if l, err := host.RaiseFileLimit(); err != nil {
		r.notes = append(r.notes, "the open-file limit could not be raised: "+err.Error())
	} else if wn, ok := r.w.CheckOpenFiles("the bench", l.Soft, perProcess); ok {
		ws = append(ws, wn)
	}
	for _, s := range r.env.Servers {
		lr, ok := s.(bench.LimitReader)
		if !ok {
			continue
		}
		l, err := lr.FileLimits(ctx)
		if err != nil {
			continue
		}
		if wn, ok := r.w.CheckOpenFiles("the "+s.Name()+" server", l.Soft, r.w.Clients); ok {
			ws = append(ws, wn)
		}
	}
	return ws
}

// open opens every client's Locker, a few at a time.
func (r *workloadRun) open(ctx context.Context) error {
	r.lockers = make([]bench.Locker, r.w.Clients)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range r.lockers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			l, err := r.env.Open(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = fmt.Errorf("client %d: %w", i, err)
			}
			r.lockers[i] = l
		})
	}
	wg.Wait()
	if first != nil {
		r.close()
	}
	return first
}

func (r *workloadRun) close() {
	var wg sync.WaitGroup
	for _, l := range r.lockers {
		if l != nil {
			wg.Go(func() { l.Close() })
		}
	}
	wg.Wait()
}

// minCalibrationHolds is the fewest mean holds a calibration window must
// span for its closed-loop maximum to be measured.
const minCalibrationHolds = 4

// errNoGrant: a calibration's window saw no grant.
var errNoGrant = errors.New("no grant")

// closedLoopMax returns a contender's closed-loop maximum, once per
// contender per run: the grants per second of the log measure returns
// (load.CalibrationTraffic).
func (cal *calibrations) closedLoopMax(contender string, measure func() (*load.Log, error)) (float64, error) {
	cal.mu.Lock()
	defer cal.mu.Unlock()
	if v, ok := cal.max[contender]; ok {
		return v, nil
	}
	log, err := measure()
	if err != nil {
		return 0, err
	}
	grants := log.GrantsBetween(log.Start, log.End)
	if grants == 0 {
		return 0, fmt.Errorf("%w in its %v window (holds longer than it, or a lock that grants nothing: %v)", errNoGrant, log.Span().Round(time.Millisecond), log.Errors)
	}
	v := float64(grants) / log.Span().Seconds()
	cal.max[contender] = v
	return v, nil
}

// edges reads, at each edge of the window, the servers' CPU, the
// coordinator's counters (when the contender has them) and the bench's
// own CPU.
type edges struct {
	env   *bench.Env
	coord bench.Coordinator
	// at holds the reads of WindowStart and WindowEnd.
	at [2]edgeRead
}

type edgeRead struct {
	serverCPU time.Duration
	source    string
	serverOK  bool
	counts    bench.Counts
	selfCPU   time.Duration
}

func newEdges(env *bench.Env) (*edges, error) {
	coord, err := openCoordinator(env)
	if err != nil {
		return nil, err
	}
	return &edges{env: env, coord: coord}, nil
}

func (e *edges) close() {
	if e.coord != nil {
		e.coord.Close()
	}
}

func (e *edges) read(ctx context.Context, at load.Edge) error {
	var r edgeRead
	var err error
	if r.serverCPU, r.source, r.serverOK, err = e.env.ServerCPU(ctx); err != nil {
		return err
	}
	if e.coord != nil {
		if r.counts, err = e.coord.Counts(ctx); err != nil {
			return err
		}
	}
	if r.selfCPU, err = host.SelfCPU(); err != nil {
		return err
	}
	e.at[at] = r
	return nil
}

// addSelfCPU adds the CPU of the bench's child processes between the
// edges (a multi-process workload's clients) to the bench's own.
func (e *edges) addSelfCPU(d time.Duration) { e.at[load.WindowEnd].selfCPU += d }
