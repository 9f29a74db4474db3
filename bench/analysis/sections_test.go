package analysis

import (
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// handScenario is a run of hand-made records (test data, not
// measurements) of one scenario with the given variants.
func handScenario(scenario string, metrics []results.MetricSpec, variants []results.VariantInfo, raw ...[]results.Raw) *Run {
	var all []results.Raw
	for _, r := range raw {
		all = append(all, r...)
	}
	return New(&results.Results{
		Raw: all, Summary: results.Summarize(all),
		Scenarios: []results.ScenarioInfo{{Name: scenario, Metrics: metrics, Variants: variants}},
	})
}

// The open loop reads the open-loop variants only, and flags a p99
// whose repetitions spread too far, with their count.
func TestOpenLoopJudgesNoise(t *testing.T) {
	lm := results.LatencyMetrics
	p99 := func(vals ...float64) []results.Metric { return ms(lm.AcquireP99.Name, lm.AcquireP99.Unit, vals...) }
	offered := func(vals ...float64) []results.Metric {
		return ms(lm.OfferedPerSec.Name, lm.OfferedPerSec.Unit, vals...)
	}
	run := handScenario("latency", lm.List(),
		[]results.VariantInfo{{Name: "w1"}, {Name: "open-100", VariantParams: results.VariantParams{Load: results.LoadOpen}}},
		rec("latency", "steady", "open-100", p99(100, 101, 102), offered(100, 100, 100)),
		rec("latency", "noisy", "open-100", p99(1, 50, 900), offered(100, 100, 100)),
		rec("latency", "steady", "w1", p99(100, 101, 102)),
	)
	ol := run.OpenLoop()
	if len(ol.Variants) != 1 || ol.Variants[0] != "open-100" {
		t.Fatalf("variants %v, want [open-100]", ol.Variants)
	}
	noise := map[string]bool{}
	for _, rd := range ol.P99 {
		if len(rd.At) != 1 || rd.At[0].N != 3 || rd.At[0].Offered != 100 {
			t.Fatalf("%s: %+v, want one reading of 3 repetitions at 100/s", rd.Contender, rd.At)
		}
		noise[rd.Contender] = rd.At[0].Noisy
	}
	if want := map[string]bool{"steady": false, "noisy": true}; len(noise) != 2 || noise["steady"] != want["steady"] || noise["noisy"] != want["noisy"] {
		t.Errorf("noise %v, want %v", noise, want)
	}
	if len(ol.Curves) != 3 || ol.Curves[1].Label != "p99" || len(ol.Curves[1].Lines) != 2 || len(ol.Curves[0].Lines) != 0 {
		t.Errorf("curves %+v, want p50 (no figures), p99 (two lines), p99.9", ol.Curves)
	}
}

// A failover variant without a fence is no availability to rank; a
// figure under its old name (d_ms) still reads as D.
func TestFailoverReading(t *testing.T) {
	fm := results.FailoverMetrics
	unavailable := func(vals ...float64) []results.Metric {
		return ms(fm.UnavailableMs.Name, fm.UnavailableMs.Unit, vals...)
	}
	run := handScenario("failover", fm.List(),
		[]results.VariantInfo{{Name: "restart"}, {Name: "no-fence", VariantParams: results.VariantParams{Fault: results.FaultSwitchNoFence}}},
		rec("failover", "a", "restart", unavailable(100, 101), ms("d_ms", "ms", 40, 41)),
		rec("failover", "b", "restart", unavailable(900, 901)),
		rec("failover", "a", "no-fence", unavailable(1, 1)),
		rec("failover", "b", "no-fence", unavailable(2, 2)),
	)
	fvs := run.Failover()
	if len(fvs) != 2 {
		t.Fatalf("%d variants, want 2", len(fvs))
	}
	restart, noFence := fvs[0], fvs[1]
	if restart.Unfenced || !restart.Detection || restart.Locks[0].Detection == nil || restart.Locks[1].Detection != nil {
		t.Errorf("restart: %+v, want a fenced variant whose lock a measured D under d_ms", restart)
	}
	if len(restart.Unavailable) != 2 || restart.Unavailable[0].Contender != "a" || restart.Unavailable[1].Place != 2 {
		t.Errorf("restart ranked %+v, want a, then b", restart.Unavailable)
	}
	if !noFence.Unfenced || noFence.Unavailable != nil {
		t.Errorf("no-fence: %+v, want unfenced and not ranked", noFence)
	}
}

// The scale slopes fit the idle holders at the longest lease only, and
// the queue reading is at the deepest queue any lock measured.
func TestScaleReading(t *testing.T) {
	sm := results.ScaleMetrics
	idle := func(c, v string, sessions, bytes float64) []results.Raw {
		return rec("scale", c, v, ms(sm.Sessions.Name, sm.Sessions.Unit, sessions), ms(sm.ServerBytesPerSession.Name, sm.ServerBytesPerSession.Unit, bytes))
	}
	queue := func(c, v string, depth, p50 float64) []results.Raw {
		return rec("scale", c, v, ms(sm.Depth.Name, sm.Depth.Unit, depth), ms(sm.PromotionP50.Name, sm.PromotionP50.Unit, p50))
	}
	long, short := results.VariantParams{Load: results.LoadIdle, Lease: "30s"}, results.VariantParams{Load: results.LoadIdle, Lease: "2s"}
	q := results.VariantParams{Load: results.LoadQueue, Lease: "30s"}
	run := handScenario("scale", sm.List(),
		[]results.VariantInfo{{Name: "idle-1k", VariantParams: long}, {Name: "idle-2k", VariantParams: long}, {Name: "idle-short", VariantParams: short},
			{Name: "queue-1", VariantParams: q}, {Name: "queue-100", VariantParams: q}},
		// 1,000 bytes of fixed cost and 500 per session
		idle("a", "idle-1k", 1000, 501), idle("a", "idle-2k", 2000, 500.5), idle("a", "idle-short", 4000, 9999),
		queue("a", "queue-1", 1, 2), queue("a", "queue-100", 100, 4),
	)
	slopes := run.ScaleSlopes()
	if len(slopes) != 1 || !slopes[0].MemoryFitted || slopes[0].Counts != 2 || slopes[0].BytesPerSession < 499.99 || slopes[0].BytesPerSession > 500.01 {
		t.Errorf("slopes %+v, want 500 bytes per session fitted over 2 counts", slopes)
	}
	if sl := run.ScaleShortLeases(); len(sl) != 0 {
		t.Errorf("short leases %+v, want none without sessions reached", sl)
	}
	qr := run.ScaleQueue()
	if qr.Variant != "queue-100" || qr.Depth != 100 || len(qr.Promotions) != 1 || qr.Promotions[0].AtDepth != 4 || qr.Promotions[0].AtFirst != 2 {
		t.Errorf("queue %+v, want queue-100 at depth 100, promotion 4 against 2", qr)
	}
}
