package scenarios

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/workload"
)

// OpenLoopConfig are the open-loop variants of the latency scenario:
// requests (acquire, then release at once) are due at a fixed rate, and
// each one's latency is counted from the moment it was due, not from when
// a worker got round to it, so that queueing behind a slow request shows
// (coordinated omission corrected, as wrk2 does). Variants open-25pct,
// open-50pct, open-75pct offer those Fractions of the contender's
// closed-loop maximum; open-<Rate> offers one absolute rate to every
// contender. A zero field takes its default: Fractions 0.25, 0.5, 0.75
// (quick 0.5 alone: the quick suite's time budget); Rate 500/s (a rate every contender of the table sustains on two cores);
// Workers 16 (the connections, each on its own key); Calibration 500ms
// (quick 200ms); Duration 800ms (quick 200ms); Warmup 50ms (quick 30ms).
// A record's percentiles rest on its requests_due (rate × Duration).
//
// The closed-loop maximum is calibrated inside the variants, since the
// latency scenario runs before throughput: Workers workers in a closed
// loop on distinct keys for Calibration, once per contender in the run
// (its first open-loop step), and recorded in every open-loop record
// (closed_loop_max_per_sec).
type OpenLoopConfig struct {
	Fractions                     []float64
	Rate                          float64
	Workers                       int
	Calibration, Duration, Warmup time.Duration
}

func (c OpenLoopConfig) withDefaults(quick bool) OpenLoopConfig {
	if len(c.Fractions) == 0 {
		c.Fractions = []float64{0.25, 0.5, 0.75}
		if quick {
			c.Fractions = []float64{0.5}
		}
	}
	if c.Rate <= 0 {
		c.Rate = 500
	}
	if c.Workers <= 0 {
		c.Workers = 16
	}
	def := func(d *time.Duration, full, short time.Duration) {
		if *d <= 0 {
			*d = full
			if quick {
				*d = short
			}
		}
	}
	def(&c.Calibration, 500*time.Millisecond, 200*time.Millisecond)
	def(&c.Duration, 800*time.Millisecond, 200*time.Millisecond)
	def(&c.Warmup, 50*time.Millisecond, 30*time.Millisecond)
	return c
}

func (c OpenLoopConfig) settings(set results.Settings) {
	set["open_loop"] = fmt.Sprintf("rates %v of the closed-loop maximum and %g/s for all; %d workers on distinct keys; %v per rate after %v warm-up; latency from the due time of each request", c.Fractions, c.Rate, c.Workers, c.Duration, c.Warmup)
	set["open_loop_samples"] = fmt.Sprintf("a record's percentiles rest on its requests_due, rate × %v: %d at %g/s, fewer at the pct rates of a slow contender; %s", c.Duration, int(c.Rate*c.Duration.Seconds()), c.Rate, tailNote)
	set["open_loop_max"] = fmt.Sprintf("calibrated inside the variant: %d workers, closed loop, distinct keys, %v, once per contender per run", c.Workers, c.Calibration)
}

// variants returns the open-loop variants; they share one calibration per
// contender.
func (c OpenLoopConfig) variants() []bench.Variant {
	cal := &calibrations{max: map[string]float64{}}
	var vs []bench.Variant
	for _, f := range c.Fractions {
		name := fmt.Sprintf("open-%dpct", int(math.Round(f*100)))
		v := c.variant(name, cal, func(max float64) float64 { return f * max })
		v.Params.RateShare = f
		vs = append(vs, v)
	}
	name := "open-" + strconv.FormatFloat(c.Rate, 'f', -1, 64)
	v := c.variant(name, nil, func(float64) float64 { return c.Rate })
	v.Params.Rate = c.Rate
	return append(vs, v)
}

// calibrations keeps each contender's closed-loop maximum once measured.
type calibrations struct {
	mu  sync.Mutex
	max map[string]float64
}

func (c OpenLoopConfig) variant(name string, cal *calibrations, rateOf func(max float64) float64) bench.Variant {
	// Opening, closing and the server CPU reads take ~100ms.
	est := c.Warmup + c.Duration + 100*time.Millisecond
	if cal != nil {
		// One calibration in three variants.
		est += (c.Calibration + c.Warmup + 100*time.Millisecond) / 3
	}
	return bench.Variant{
		Name:     name,
		Params:   results.VariantParams{Workers: c.Workers, Load: results.LoadOpen},
		Estimate: est,
		Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
			var maxRate float64
			if cal != nil {
				var err error
				if maxRate, err = cal.of(ctx, env, c); err != nil {
					return results.Raw{}, fmt.Errorf("calibrating the closed-loop maximum: %w", err)
				}
			}
			rate := rateOf(maxRate)
			p, err := paced(ctx, env, rate, c.Workers, c.Warmup, c.Duration, DistinctKey)
			if err != nil {
				return results.Raw{}, err
			}
			return p.outcome(rate, maxRate)
		},
	}
}

// outcome is the record of an open-loop run. A window whose requests all
// still wait behind a backlog at the stop is a measured saturation (their
// latencies are lower bounds), even when no request was granted in the
// whole run (a slow contender on a loaded machine in a quick window): the
// record says so in its errors and counts (saturated_no_grant), which the
// report shows. A run with no grant and failures, or nothing due, is no
// measurement: an error.
func (p pacedResult) outcome(rate, maxRate float64) (results.Raw, error) {
	if p.everGranted > 0 {
		return p.raw(rate, maxRate)
	}
	if p.failures > 0 || p.unserved == 0 {
		return results.Raw{}, fmt.Errorf("no request granted in the run (%d due in the %v window, %d failures): %v", p.due, p.span.Round(time.Millisecond), p.failures, p.errors)
	}
	raw, err := p.raw(rate, maxRate)
	if err != nil {
		return raw, err
	}
	raw.Counts["saturated_no_grant"] = 1
	raw.Errors = append(raw.Errors, fmt.Sprintf("saturated: no request granted within the run (%d due in the %v window, all unserved at the stop, 0 failures): the latencies are lower bounds", p.due, p.span.Round(time.Millisecond)))
	return raw, nil
}

// of returns env's contender's closed-loop maximum, measuring it on first
// use.
func (cal *calibrations) of(ctx context.Context, env *bench.Env, c OpenLoopConfig) (float64, error) {
	cal.mu.Lock()
	defer cal.mu.Unlock()
	if r, ok := cal.max[env.Contender.Name]; ok {
		return r, nil
	}
	// A slow contender on a loaded machine may complete no cycle in a
	// short (quick) window: measure again over a doubled window, a few
	// times, before giving up.
	// Its keys are not the open loop's: an acquire cut off when the span
	// ends can leave its key held until the lease expires.
	key := func(i int) string { return DistinctKey(c.Workers + i) }
	var m load.Measurement
	for d, try := c.Calibration, 0; try < 5; d, try = 2*d, try+1 {
		var err error
		m, err = load.Measure(ctx, env, load.ClosedLoop{Workers: c.Workers, Key: key, Warmup: c.Warmup, Duration: d})
		if err != nil {
			return 0, err
		}
		if m.Rec.Cycles > 0 {
			break
		}
	}
	if m.Rec.Cycles == 0 {
		return 0, noCycles(m)
	}
	r := float64(m.Rec.Cycles) / m.Elapsed.Seconds()
	cal.max[env.Contender.Name] = r
	return r, nil
}

// pacedResult is what one open-loop run measured.
type pacedResult struct {
	// latency holds each measured request's time from its due time to
	// its grant, in ns; a request still waiting or never started at the
	// stop is recorded at its lower bound (the stop minus its due time),
	// so a backlog is not hidden.
	latency *hdrhistogram.Histogram
	// due counts the requests due within the window; completed those
	// granted; unserved those still waiting or never started at the stop.
	due, completed, unserved, failures int64
	// granted counts the grants within the window (of any request),
	// everGranted those of the whole run.
	granted, everGranted int64
	// span is the window the requests were due in; elapsed the time
	// until the run stopped.
	span, elapsed time.Duration
	errors        []string
	// serverCPU is the servers' CPU between the window's edges, when
	// serverOK.
	serverCPU    time.Duration
	serverSource string
	serverOK     bool
}

// drainFactor bounds an open-loop run at drainFactor × its window after
// the warm-up: the measured requests still waiting then are unserved, so
// that an overloaded contender cannot stretch the run without end.
const drainFactor = 1.5

// paced runs an open loop on a fresh Locker of env on the engine: request
// i is due at i/rate (a constant-spacing schedule, as wrk2 paces them,
// hold 0), the first warmup of them not measured; each of workers takes
// the next request, waits until it is due, acquires its own key (key(w))
// and releases at once; a request's latency is its grant minus its due
// time. A request is late when every worker is busy: its wait counts,
// which a closed loop would leave out. The window is at least one
// interval long, so that a slow contender's rate still measures a
// request.
func paced(ctx context.Context, env *bench.Env, rate float64, workers int, warmup, d time.Duration, key func(int) string) (pacedResult, error) {
	if rate <= 0 || workers <= 0 {
		return pacedResult{}, fmt.Errorf("open loop: rate %g/s and %d workers", rate, workers)
	}
	l, err := env.Open(ctx)
	if err != nil {
		return pacedResult{}, err
	}
	defer l.Close()
	d = max(d, time.Duration(float64(time.Second)/rate))
	var res pacedResult
	var srv0 time.Duration
	edge := func(ctx context.Context, e load.Edge) error {
		cpu, src, ok, err := env.ServerCPU(ctx)
		if e == load.WindowStart {
			srv0, res.serverSource, res.serverOK = cpu, src, ok
		} else {
			res.serverCPU, res.serverOK = cpu-srv0, res.serverOK && ok
		}
		return err
	}
	log, err := load.Run(ctx, load.Traffic{
		Clients:  workers,
		Locker:   func(int) bench.Locker { return l },
		Key:      func(client, _ int) string { return key(client) },
		Schedule: constantSchedule(rate),
		Warmup:   warmup, Window: d, Grace: time.Duration(float64(d) * (drainFactor - 1)),
		Edge: edge,
	})
	if err != nil {
		return res, err
	}
	t := log.Tally()
	res.latency = log.FromIntended()
	res.due, res.completed, res.unserved, res.failures = t.Requests, t.Granted, t.Censored+t.Unstarted, t.Failed
	res.granted = log.GrantsBetween(log.Start, log.End)
	res.everGranted = log.GrantsBetween(0, math.MaxInt64)
	res.span, res.elapsed, res.errors = log.Span(), log.Stop-log.Start, log.Errors
	return res, nil
}

// constantSchedule is an open loop of requests every 1/rate on key 0,
// each released at once.
func constantSchedule(rate float64) load.Schedule {
	w := workload.Workload{
		Keys:     workload.Keys{Count: 1},
		Arrivals: workload.Arrivals{Loop: workload.Open, Rate: rate, Spacing: workload.Constant},
		Hold:     workload.Distribution{Kind: workload.Fixed},
	}
	return w.Schedule()
}

// raw is the repetition's record of an open-loop run at rate (maxRate is
// the calibrated closed-loop maximum, 0 when not calibrated).
func (p pacedResult) raw(rate, maxRate float64) (results.Raw, error) {
	h, err := results.NewHistogram("acquire_from_due", "ns", p.latency)
	if err != nil {
		return results.Raw{}, err
	}
	lm := results.LatencyMetrics
	raw := results.Raw{
		Seconds: p.span.Seconds(),
		Counts: map[string]int64{
			"requests_due": p.due, "completed": p.completed, "unserved": p.unserved, "failures": p.failures,
		},
		Histograms: []results.Histogram{h},
		Errors:     p.errors,
		Metrics: []results.Metric{
			lm.AcquireP50.Of(us(p.latency.ValueAtQuantile(50))),
			lm.AcquireP99.Of(us(p.latency.ValueAtQuantile(99))),
			lm.AcquireP999.Of(us(p.latency.ValueAtQuantile(99.9))),
			lm.OfferedPerSec.Of(float64(p.due) / p.span.Seconds()),
			lm.AchievedPerSec.Of(float64(p.granted) / p.span.Seconds()),
			lm.TargetPerSec.Of(rate),
			lm.Failures.Of(float64(p.failures)),
		},
	}
	if maxRate > 0 {
		raw.Metrics = append(raw.Metrics, lm.ClosedLoopMaxPerSec.Of(maxRate))
	}
	if p.serverOK {
		raw.CPU = &results.CPU{ServerMS: float64(p.serverCPU) / float64(time.Millisecond), ServerSource: p.serverSource}
	}
	return raw, nil
}
