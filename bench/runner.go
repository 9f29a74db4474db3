package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

// Runner runs every selected scenario × variant × repetition × contender
// against one Deployment. Contenders are interleaved inside each repetition
// so that slow drift of the machine spreads over all of them.
type Runner struct {
	Scenarios  []Scenario
	Contenders []Contender
	Deployment Deployment
	// Repetitions is the number of repetitions; default 1 when zero.
	Repetitions int
	// Quick shortens every scenario.
	Quick bool
	// Lease is the lease or TTL of every contender: parity.
	Lease time.Duration
	// Progress, when set, is told about every step.
	Progress Progress
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Step is one measured unit of a run.
type Step struct {
	Index, Total            int // 1-based
	Scenario, Variant       string
	Contender               string
	Repetition, Repetitions int
	// Remaining estimates the wall time left, this step included.
	Remaining time.Duration
}

// Progress displays a run's progress. Its methods are called from the
// runner's goroutine only.
type Progress interface {
	Start(s Step)
	Finish(s Step, err error)
}

type plannedStep struct {
	Step
	scenario  *Scenario
	variant   Variant
	contender Contender
}

// Run fills res.Parameters, res.Contenders, res.Claims, res.Raw, res.Summary and
// res.Notes. When ctx
// ends it stops at once, marks res partial and returns ctx.Err(); the
// repetitions finished so far stay in res. A failing step is logged, noted
// in res.Notes and skipped; Run then returns an error after the last step.
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
	}
	for _, c := range r.Contenders {
		res.Parameters.Contenders = append(res.Parameters.Contenders, c.Name)
		set := results.Settings{}
		for k, v := range c.Settings {
			set[k] = v
		}
		// The harness owns these: parity makes the lease one value for all.
		set["lease"], set["server_role"] = r.Lease.String(), c.Server.Name
		if c.ServerSettings != nil {
			got, err := c.ServerSettings(ctx, r.Deployment.Servers(c.Server.Name), r.Lease)
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: the settings of its servers could not be read: %v", c.Name, err))
			}
			for k, v := range got {
				set[k] = v
			}
		}
		res.Parameters.Contender[c.Name] = set
		res.Contenders = append(res.Contenders, c.Info())
		res.Claims = append(res.Claims, c.Claims...)
	}

	steps := r.plan(reps)
	var estimated, actual time.Duration // of the steps done, for the ETA scale
	var failed []string
	skipped := map[string]bool{}
	for i := range steps {
		st := &steps[i]
		var left time.Duration
		for _, later := range steps[i:] {
			left += later.variant.Estimate
		}
		if estimated > 0 {
			left = time.Duration(float64(left) * float64(actual) / float64(estimated))
		}
		st.Remaining = left
		if r.Progress != nil {
			r.Progress.Start(st.Step)
		}
		servers := r.Deployment.Servers(st.contender.Server.Name)
		env := &Env{Contender: st.contender, Servers: servers, Addrs: Addrs(servers), Lease: r.Lease, Deployment: r.Deployment}
		begin := time.Now()
		raw, err := st.variant.Run(ctx, env)
		estimated += st.variant.Estimate
		actual += time.Since(begin)
		if r.Progress != nil {
			r.Progress.Finish(st.Step, err)
		}
		if ctx.Err() != nil {
			res.Partial = true
			res.PartialReason = fmt.Sprintf("interrupted during %s/%s/%s repetition %d (%d of %d steps done)",
				st.Scenario, st.Variant, st.Contender, st.Repetition, i, len(steps))
			res.Summary = results.Summarize(res.Raw)
			return ctx.Err()
		}
		var skip *SkipError
		if errors.As(err, &skip) {
			if at := st.Scenario + "/" + st.Variant + "/" + st.Contender; !skipped[at] {
				skipped[at] = true
				res.Notes = append(res.Notes, at+" skipped: "+skip.Reason)
			}
			continue
		}
		if err != nil {
			msg := fmt.Sprintf("%s/%s/%s repetition %d failed: %v", st.Scenario, st.Variant, st.Contender, st.Repetition, err)
			log.Error("bench: step failed", "scenario", st.Scenario, "variant", st.Variant,
				"contender", st.Contender, "repetition", st.Repetition, "err", err)
			res.Notes = append(res.Notes, msg)
			failed = append(failed, msg)
			continue
		}
		raw.Scenario, raw.Contender, raw.Variant, raw.Repetition = st.Scenario, st.Contender, st.Variant, st.Repetition
		for i := range raw.Metrics {
			raw.Metrics[i].Better = st.scenario.Better[raw.Metrics[i].Name]
		}
		raw.StartedAt = begin.UTC()
		res.Raw = append(res.Raw, raw)
	}
	res.Summary = results.Summarize(res.Raw)
	if len(failed) > 0 {
		return fmt.Errorf("bench: %d of %d steps failed, first: %s", len(failed), len(steps), failed[0])
	}
	return nil
}

// plan lists the steps in run order: scenario, variant, repetition,
// contender.
func (r *Runner) plan(reps int) []plannedStep {
	var steps []plannedStep
	for si := range r.Scenarios {
		s := &r.Scenarios[si]
		for _, v := range s.Variants(r.Quick) {
			for rep := 1; rep <= reps; rep++ {
				for _, c := range r.Contenders {
					if (c.Floor && !s.Floors) || (c.ContendedOnly && !v.Contended) ||
						(len(c.Scenarios) > 0 && !slices.Contains(c.Scenarios, s.Name)) {
						continue
					}
					steps = append(steps, plannedStep{
						Step: Step{
							Scenario: s.Name, Variant: v.Name, Contender: c.Name,
							Repetition: rep, Repetitions: reps,
						},
						scenario: s, variant: v, contender: c,
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

// ErrNoServers is returned by CheckDeployment when a contender's servers
// are missing from the deployment.
var ErrNoServers = errors.New("bench: no servers for spec")

// CheckDeployment verifies that d has every server of every contender's
// spec.
func CheckDeployment(d Deployment, contenders []Contender) error {
	for _, c := range contenders {
		if got, want := len(d.Servers(c.Server.Name)), c.Server.Count(); got != want {
			return fmt.Errorf("%w %q (contender %s): %d of %d servers", ErrNoServers, c.Server.Name, c.Name, got, want)
		}
	}
	return nil
}
