// Package run is the runner: it plans every scenario × variant ×
// repetition × contender of a run against one deployment, estimates the
// time left (the ETA), reports progress and fills a results.Results.
package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Runner runs every selected scenario × variant × repetition × contender
// against one Deployment. Contenders are interleaved inside each repetition
// so that slow drift of the machine spreads over all of them.
type Runner struct {
	Scenarios  []bench.Scenario
	Contenders []bench.Contender
	Deployment bench.Deployment
	// Repetitions is the number of repetitions; default 1 when zero.
	Repetitions int
	// Quick shortens every scenario.
	Quick bool
	// Lease is the lease or TTL of every contender: parity.
	Lease time.Duration
	// OutDir is the run's output folder, handed to every variant
	// (bench.Env.OutDir); "" keeps no files.
	OutDir string
	// Progress, when set, is told about every step.
	Progress Progress
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Network, when set, is the network profile the deployment's servers
	// sit behind: every record carries it (results.Raw.Network) and its
	// variant's name ends in @Network, so that one run holds the same
	// variant under several profiles.
	Network string
	// Line, when set, starts a window of the emulated network's counters
	// before each step; the function it returns gives the window's cost,
	// which every record of the step carries (results.Raw.Line): whether
	// the delay line queued while the step ran.
	Line func() func() *results.LineCost
	// ClientHost, when set, is every Env's ClientHost: a host of its own
	// on the emulated network for a client process.
	ClientHost func(ctx context.Context, name string) (bench.ClientHost, error)
}

// Step is one measured unit of a run.
type Step struct {
	Index, Total            int // 1-based
	Scenario, Variant       string
	Contender               string
	Repetition, Repetitions int
	// Remaining estimates the wall time left, this step included.
	Remaining time.Duration
	// Skipped, set before Progress.Finish, says why the step measured
	// nothing (results.Raw.Skipped; "contender: reason" per skipped
	// contender of an interleaved step).
	Skipped string
}

// Progress displays a run's progress. Its methods are called from the
// runner's goroutine only.
type Progress interface {
	Start(s Step)
	Finish(s Step, err error)
}

type plannedStep struct {
	Step
	scenario  *bench.Scenario
	variant   bench.Variant
	contender bench.Contender
	// together are the contenders of an interleaved variant's step (one
	// step per repetition); contender is then the zero value.
	together []bench.Contender
	// capped is why the contender does not run the variant
	// (bench.Contender.Caps), "" when it does: the step records it.
	capped string
}

// Run fills res.Parameters, res.Contenders, res.Claims, res.Scenarios,
// res.Raw, res.Summary and res.Notes. When ctx ends it stops at once, marks res partial and returns
// ctx.Err(); the repetitions finished so far stay in res. A record with
// Skipped set (the variant does not apply to the contender, or the backend
// cannot run it) is kept as data, like any record. A failing step is
// logged, noted in res.Notes and skipped; Run then returns an error after
// the last step.
func (r *Runner) Run(ctx context.Context, res *results.Results) error {
	log := r.Logger
	if log == nil {
		log = slog.Default()
	}
	reps := max(r.Repetitions, 1)
	res.Parameters.Quick = r.Quick
	res.Parameters.Repetitions = reps
	res.Parameters.Scenario = map[string]results.Settings{}
	res.Parameters.Contender = map[string]results.Settings{}
	for _, s := range r.Scenarios {
		res.Parameters.Scenarios = append(res.Parameters.Scenarios, s.Name)
		res.Parameters.Scenario[s.Name] = s.Settings(r.Quick)
		res.Scenarios = append(res.Scenarios, s.Info(r.Quick))
	}
	for _, c := range r.Contenders {
		res.Parameters.Contenders = append(res.Parameters.Contenders, c.Name)
		set := results.Settings{}
		for k, v := range c.Settings {
			set[k] = v
		}
		// The harness owns these: parity makes the lease one value for all.
		set["lease"], set["server_role"] = r.Lease.String(), c.Server.Name
		for _, s := range r.Scenarios {
			if s.ContenderSettings != nil {
				maps.Copy(set, s.ContenderSettings(c))
			}
		}
		if c.ServerSettings != nil {
			got, err := c.ServerSettings(ctx, r.Deployment.Servers(c.Server.Name), r.Lease)
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: the settings of its servers could not be read: %v", c.Name, err))
			}
			for k, v := range got {
				set[k] = v
			}
		}
		for i, k := range c.Caps {
			set[fmt.Sprintf("cap_%d", i+1)] = k.String()
		}
		if !r.Quick {
			for i, k := range c.Repeats {
				set[fmt.Sprintf("repeat_%d", i+1)] = k.String()
			}
		}
		res.Parameters.Contender[c.Name] = set
		res.Contenders = append(res.Contenders, c.Info())
		res.Claims = append(res.Claims, c.Claims...)
	}

	steps := r.plan(reps)
	// The ETA: the estimates of the steps left, scaled by actual/estimated
	// of the steps measured so far. A contender a variant skipped (it does
	// not apply) is skipped in the variant's later repetitions too: they
	// cost nothing, and the skipped steps stay out of the scale, which
	// their near-zero time would otherwise pull down.
	eta := etaModel{skips: map[string]bool{}}
	total := eta.remaining(steps)
	log.Info("plan", "steps", len(steps), "repetitions", reps, "estimated_total", total.Round(time.Second).String())
	var failed []string
	for i := range steps {
		st := &steps[i]
		st.Remaining = eta.remaining(steps[i:])
		if r.Progress != nil {
			r.Progress.Start(st.Step)
		}
		begin := time.Now()
		var lineWindow func() *results.LineCost
		if r.Line != nil {
			lineWindow = r.Line()
		}
		raws, errs := r.runStep(ctx, st)
		var line *results.LineCost
		if lineWindow != nil { // nil when the counters could not be read
			line = lineWindow()
		}
		eta.learn(st, raws, errs, time.Since(begin))
		if r.Progress != nil {
			st.Skipped = skipReasons(raws, errs, len(st.together) > 0)
			r.Progress.Finish(st.Step, errors.Join(errs...))
		}
		if ctx.Err() != nil {
			res.Partial = true
			res.PartialReason = fmt.Sprintf("interrupted during %s/%s/%s repetition %d (%d of %d steps done)",
				st.Scenario, st.Variant, st.Contender, st.Repetition, i, len(steps))
			res.Summary = results.Summarize(res.Raw)
			return ctx.Err()
		}
		for j, raw := range raws {
			if err := errs[j]; err != nil {
				at := st.Scenario + "/" + st.Variant + "/" + raw.Contender
				msg := fmt.Sprintf("%s repetition %d failed: %v", at, st.Repetition, err)
				log.Error("run: step failed", "scenario", st.Scenario, "variant", st.Variant,
					"contender", raw.Contender, "repetition", st.Repetition, "err", err)
				res.Notes = append(res.Notes, msg)
				failed = append(failed, msg)
				continue
			}
			raw.Scenario, raw.Variant, raw.Repetition = st.Scenario, st.Variant, st.Repetition
			raw.Network, raw.Line = r.Network, line
			for i := range raw.Metrics {
				raw.Metrics[i].Better = st.scenario.Better(raw.Metrics[i].Name)
			}
			raw.StartedAt = begin.UTC()
			res.Raw = append(res.Raw, raw)
		}
	}
	res.Summary = results.Summarize(res.Raw)
	if len(failed) > 0 {
		return fmt.Errorf("run: %d of %d steps failed, first: %s", len(failed), len(steps), failed[0])
	}
	return nil
}

// skipReasons says why the records of a step measured nothing, for
// Progress: the reason of a single record, or "contender: reason" per
// skipped record of an interleaved step.
func skipReasons(raws []results.Raw, errs []error, interleaved bool) string {
	var reasons []string
	for i, raw := range raws {
		if raw.Skipped == "" || errs[i] != nil {
			continue
		}
		if interleaved {
			reasons = append(reasons, raw.Contender+": "+raw.Skipped)
		} else {
			reasons = append(reasons, raw.Skipped)
		}
	}
	return strings.Join(reasons, "; ")
}

// runStep measures one step and returns its records, each with its
// contender named, and an error per record (one record, or one per
// contender of an interleaved step).
func (r *Runner) runStep(ctx context.Context, st *plannedStep) ([]results.Raw, []error) {
	env := func(c bench.Contender) *bench.Env {
		servers := r.Deployment.Servers(c.Server.Name)
		env := &bench.Env{Contender: c, Servers: servers, Addrs: bench.Addrs(servers), Lease: r.Lease, Deployment: r.Deployment, OutDir: r.OutDir, ClientHost: r.ClientHost}
		if ch, ok := r.Deployment.(bench.ClientHoster); ok && env.ClientHost == nil {
			env.ClientHost, env.RemoteClients = ch.ClientHost, true
		}
		return env
	}
	if st.capped != "" {
		return []results.Raw{{Contender: st.Contender, Skipped: st.capped}}, []error{nil}
	}
	if st.variant.Interleaved == nil {
		if why := skipOf(st.variant, st.contender); why != "" {
			return []results.Raw{{Contender: st.Contender, Skipped: why}}, []error{nil}
		}
		raw, err := st.variant.Run(ctx, env(st.contender))
		raw.Contender = st.Contender
		return []results.Raw{raw}, []error{err}
	}
	envs := make([]*bench.Env, len(st.together))
	for i, c := range st.together {
		envs[i] = env(c)
	}
	raws, errs := st.variant.Interleaved(ctx, envs)
	if len(raws) != len(envs) || len(errs) != len(envs) {
		err := fmt.Errorf("run: interleaved variant %s returned %d records and %d errors for %d contenders", st.Variant, len(raws), len(errs), len(envs))
		if ctx.Err() != nil { // stopped (Ctrl-C): say so, not a malformed answer
			err = ctx.Err()
		}
		raws, errs = make([]results.Raw, len(envs)), make([]error, len(envs))
		for i := range errs {
			errs[i] = err
		}
	}
	for i := range raws {
		raws[i].Contender = st.together[i].Name
	}
	return raws, errs
}

// skipOf is why v skips c before the run ("" when it runs it).
func skipOf(v bench.Variant, c bench.Contender) string {
	if v.Skip == nil {
		return ""
	}
	return v.Skip(c)
}

// etaModel estimates the wall time left from the steps done.
type etaModel struct {
	// estimated and actual sum the measured (not skipped) steps done.
	estimated, actual time.Duration
	// skips holds scenario/variant/contender of the records skipped.
	skips map[string]bool
}

func skipKey(st *plannedStep, contender string) string {
	return st.Scenario + "/" + st.Variant + "/" + contender
}

// cost is a step's estimate without the contenders known to skip it:
// seen skipping it, or holding fewer sessions at once than it needs.
func (m *etaModel) cost(st *plannedStep) time.Duration {
	skips := func(c bench.Contender) bool {
		return m.skips[skipKey(st, c.Name)] || (c.MaxSessions > 0 && st.variant.Sessions > c.MaxSessions) ||
			(st.variant.Interleaved == nil && skipOf(st.variant, c) != "")
	}
	if st.capped != "" {
		return 0
	}
	if len(st.together) == 0 {
		if skips(st.contender) {
			return 0
		}
		return st.variant.EstimateOf(st.contender)
	}
	var d time.Duration
	for _, c := range st.together {
		if !skips(c) {
			d += st.variant.EstimateOf(c)
		}
	}
	return d
}

// remaining is the wall time the steps are expected to take.
func (m *etaModel) remaining(steps []plannedStep) time.Duration {
	var left time.Duration
	for i := range steps {
		left += m.cost(&steps[i])
	}
	if m.estimated > 0 {
		left = time.Duration(float64(left) * float64(m.actual) / float64(m.estimated))
	}
	return left
}

// learn takes in a finished step's records and wall time.
func (m *etaModel) learn(st *plannedStep, raws []results.Raw, errs []error, took time.Duration) {
	for i, raw := range raws {
		if raw.Skipped != "" && errs[i] == nil {
			m.skips[skipKey(st, raw.Contender)] = true
		}
	}
	// A skip costs about nothing and says nothing of the scale.
	if est := m.cost(st); est > 0 {
		m.estimated += est
		m.actual += took
	}
}

// plan lists the steps in run order: scenario, variant, repetition,
// contender; an interleaved variant has one step per repetition for all
// its contenders.
func (r *Runner) plan(reps int) []plannedStep {
	var steps []plannedStep
	for si := range r.Scenarios {
		s := &r.Scenarios[si]
		for _, v := range s.Variants(r.Quick) {
			name := v.Name
			if r.Network != "" {
				name += results.NetworkSuffix + r.Network
			}
			vreps := reps
			if v.MaxRepetitions > 0 {
				vreps = min(reps, v.MaxRepetitions)
			}
			// A contender's Repeat may give it more repetitions than the
			// variant's: the later ones run it alone.
			creps := map[string]int{}
			last := vreps
			for _, c := range r.Contenders {
				creps[c.Name] = vreps
				if c.CapOf(s.Name, v, r.Quick) == "" {
					creps[c.Name] = c.RepetitionsOf(s.Name, v.Name, r.Quick, vreps)
				}
				last = max(last, creps[c.Name])
			}
			for rep := 1; rep <= last; rep++ {
				var together []bench.Contender
				for _, c := range r.Contenders {
					if (c.Floor && !s.Floors) || (c.ContendedOnly && !v.Contended) ||
						(len(c.Scenarios) > 0 && !slices.Contains(c.Scenarios, s.Name)) || rep > creps[c.Name] {
						continue
					}
					capped := c.CapOf(s.Name, v, r.Quick)
					if v.Interleaved != nil && capped == "" {
						together = append(together, c)
						continue
					}
					steps = append(steps, plannedStep{
						Step: Step{
							Scenario: s.Name, Variant: name, Contender: c.Name,
							Repetition: rep, Repetitions: creps[c.Name],
						},
						scenario: s, variant: v, contender: c, capped: capped,
					})
				}
				if len(together) > 0 {
					n := 0
					for _, c := range together {
						n = max(n, creps[c.Name])
					}
					steps = append(steps, plannedStep{
						Step: Step{
							Scenario: s.Name, Variant: name, Contender: interleavedName(together),
							Repetition: rep, Repetitions: n,
						},
						scenario: s, variant: v, together: together,
					})
				}
			}
		}
	}
	for i := range steps {
		steps[i].Index, steps[i].Total = i+1, len(steps)
	}
	return steps
}

// interleavedName names the contenders of an interleaved step for progress
// and notes.
func interleavedName(cs []bench.Contender) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return "interleaved " + strings.Join(names, "+")
}

// CheckDeployment verifies that d has every server of every contender's
// spec.
func CheckDeployment(d bench.Deployment, contenders []bench.Contender) error {
	for _, c := range contenders {
		if got, want := len(d.Servers(c.Server.Name)), c.Server.Count(); got != want {
			return fmt.Errorf("%w %q (contender %s): %d of %d servers", bench.ErrNoServers, c.Server.Name, c.Name, got, want)
		}
	}
	return nil
}

// Plan is what a run is expected to cost before it starts: its steps and
// the ETA model's estimate, in total and per scenario.
type Plan struct {
	Steps int
	Total time.Duration
	// Scenario is the estimate of each scenario's steps; Contender of
	// each contender's, per scenario (an interleaved step's estimate
	// shared evenly).
	Scenario  map[string]time.Duration
	Contender map[string]map[string]time.Duration
}

// Plan returns the run's plan without running anything: what the runner
// logs as "plan" at the start of Run.
func (r *Runner) Plan() Plan {
	steps := r.plan(max(r.Repetitions, 1))
	eta := etaModel{skips: map[string]bool{}}
	p := Plan{Steps: len(steps), Scenario: map[string]time.Duration{}, Contender: map[string]map[string]time.Duration{}}
	for i := range steps {
		st := &steps[i]
		d := eta.cost(st)
		p.Total += d
		p.Scenario[st.Scenario] += d
		if p.Contender[st.Scenario] == nil {
			p.Contender[st.Scenario] = map[string]time.Duration{}
		}
		if len(st.together) == 0 {
			p.Contender[st.Scenario][st.Contender] += d
			continue
		}
		for _, c := range st.together {
			p.Contender[st.Scenario][c.Name] += d / time.Duration(len(st.together))
		}
	}
	return p
}
