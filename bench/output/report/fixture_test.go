package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/results"
)

// fixture builds the synthetic results.json the renderer tests use. Every
// number in it is made up from fixed seeds to exercise the renderers; it is
// a test fixture, labelled as such in its run id, environment and notes,
// and never a measurement.
func fixture(t testing.TB) *results.Results {
	t.Helper()
	rng := rand.New(rand.NewPCG(8, 2026))
	start := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	jitter := func(v, rel float64) float64 { return v * (1 + rel*(2*rng.Float64()-1)) }
	hist := func(name string, n int, medianUS, tail float64) results.Histogram {
		h := hdrhistogram.New(1, int64(10*time.Minute), 3)
		for range n {
			// log-normal-ish body with a heavier tail
			v := medianUS * math.Exp(0.25*rng.NormFloat64())
			if rng.Float64() < 0.01 {
				v *= tail
			}
			if err := h.RecordValue(int64(v * 1000)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := results.NewHistogram(name, "ns", h)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	type lat struct{ acquire, cycle float64 }
	latency := map[string]lat{
		"monolock": {120, 180}, "redis": {100, 190}, "redlock": {310, 600},
		"tcp-floor": {70, 95}, "redis-floor": {60, 60},
		"monolock-warm": {92, 150}, "monolock-tfo": {104, 165}, "etcd": {880, 1500}, "postgres": {430, 790},
	}
	// The eleven contenders of the layout tests, in the run's order; the
	// -spin variants are waiting strategies: contended variants only.
	all := []string{"monolock", "redis", "redlock", "redis-spin", "redlock-spin", "tcp-floor", "redis-floor", "monolock-warm", "monolock-tfo", "etcd", "postgres"}
	contenders := []string{"monolock", "redis", "redlock", "tcp-floor", "redis-floor", "monolock-warm", "monolock-tfo", "etcd", "postgres"}
	contended := []string{"monolock", "redis", "redlock", "redis-spin", "redlock-spin", "monolock-warm", "monolock-tfo", "etcd", "postgres"}
	var raw []results.Raw
	for rep := 1; rep <= 3; rep++ {
		for _, v := range []string{"w1", "w8"} {
			slow := map[string]float64{"w1": 1, "w8": 2.5}[v]
			for _, c := range contenders {
				a := jitter(latency[c].acquire*slow, 0.06)
				cy := jitter(latency[c].cycle*slow, 0.06)
				ha := hist("acquire", 400, a, 6)
				hc := hist("cycle", 400, cy, 6)
				raw = append(raw, results.Raw{
					Scenario: "latency", Contender: c, Variant: v, Repetition: rep,
					StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 0.5,
					Metrics: []results.Metric{
						{Name: "acquire_p50", Unit: "us", Value: a}, {Name: "acquire_p99", Unit: "us", Value: a * 2.1},
						{Name: "acquire_p999", Unit: "us", Value: a * 5.5}, {Name: "cycle_p50", Unit: "us", Value: cy},
						{Name: "cycle_p99", Unit: "us", Value: cy * 2.2},
					},
					Counts:     map[string]int64{"cycles": 400},
					Histograms: []results.Histogram{ha, hc},
				})
				// The blocks' medians and the interval they give.
				last := &raw[len(raw)-1]
				var blocks []float64
				for range 10 {
					blocks = append(blocks, jitter(a, 0.15))
				}
				last.Series = []results.Series{{Name: "acquire_p50_blocks", Unit: "us", Values: blocks}}
				last.Metrics = append(last.Metrics,
					results.Metric{Name: "acquire_p50_ci_lo", Unit: "us", Value: a * 0.9},
					results.Metric{Name: "acquire_p50_ci_hi", Unit: "us", Value: a * 1.1})
			}
		}
		for _, v := range []string{"open-25pct", "open-50pct", "open-75pct", "open-500"} {
			share := map[string]float64{"open-25pct": 0.25, "open-50pct": 0.5, "open-75pct": 0.75}[v]
			for _, c := range contenders {
				rate := 500.0
				if share > 0 {
					rate = share * map[string]float64{"monolock": 8000, "redis": 12000, "redlock": 2500, "tcp-floor": 11000, "redis-floor": 20000,
						"monolock-warm": 9500, "monolock-tfo": 9000, "etcd": 1600, "postgres": 2800}[c]
				}
				a := jitter(latency[c].acquire*(1+3*share*share), 0.06)
				raw = append(raw, results.Raw{
					Scenario: "latency", Contender: c, Variant: v, Repetition: rep,
					StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 2,
					Metrics: []results.Metric{
						{Name: "acquire_p50", Unit: "us", Value: a}, {Name: "acquire_p99", Unit: "us", Value: a * (3 + 10*share)},
						{Name: "acquire_p999", Unit: "us", Value: a * (6 + 30*share)},
						{Name: "offered_per_sec", Unit: "1/s", Value: rate}, {Name: "achieved_per_sec", Unit: "1/s", Value: jitter(rate, 0.01)},
					},
				})
			}
		}
		peak := map[string]float64{"monolock": 21000, "redis": 36000, "redlock": 9000, "tcp-floor": 30000, "redis-floor": 52000,
			"monolock-warm": 26000, "monolock-tfo": 24000, "etcd": 4200, "postgres": 7300}
		for _, w := range []int{1, 4, 16, 64} {
			for _, c := range contenders {
				scale := math.Min(1, float64(w)/12) * (1 - 0.002*float64(w))
				cps := jitter(peak[c]*math.Max(scale, 0.12), 0.05)
				raw = append(raw, results.Raw{
					Scenario: "throughput", Contender: c, Variant: fmt.Sprintf("distinct-w%d", w), Repetition: rep,
					StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 2,
					Metrics: []results.Metric{
						{Name: "cycles_per_sec", Unit: "1/s", Value: cps},
						{Name: "cycle_p99", Unit: "us", Value: jitter(float64(w)*1e6/cps*2, 0.1)},
						{Name: "server_cpu_ms_per_1k", Unit: "ms", Value: jitter(map[string]float64{"monolock": 38, "redis": 21, "redlock": 95, "tcp-floor": 25, "redis-floor": 9,
							"monolock-warm": 36, "monolock-tfo": 37, "etcd": 240, "postgres": 160}[c], 0.1)},
						{Name: "client_cpu_ms_per_1k", Unit: "ms", Value: jitter(45, 0.1)},
					},
					Counts: map[string]int64{"cycles": int64(cps * 2)},
					CPU:    &results.CPU{ServerMS: 80, ServerSource: "cgroup cpu.stat", ClientMS: 90},
				})
				if c == "redlock" && w == 64 && rep == 2 {
					last := &raw[len(raw)-1]
					last.Counts["failures"], last.Counts["gave_up"] = 3, 3
					last.Errors = []string{"redsync: failed to acquire lock (fixture)"}
				}
			}
		}
		for _, c := range contended {
			cps := jitter(map[string]float64{"monolock": 6100, "redis": 2400, "redlock": 700, "redis-spin": 5200, "redlock-spin": 1900,
				"monolock-warm": 6600, "monolock-tfo": 6400, "etcd": 1500, "postgres": 3100}[c], 0.05)
			raw = append(raw, results.Raw{
				Scenario: "throughput", Contender: c, Variant: "shared-w16", Repetition: rep,
				StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 2,
				Metrics: []results.Metric{
					{Name: "cycles_per_sec", Unit: "1/s", Value: cps},
					{Name: "cycle_p99", Unit: "us", Value: jitter(16e6/cps*3, 0.1)},
					{Name: "server_cpu_ms_per_1k", Unit: "ms", Value: jitter(40, 0.1)},
					{Name: "client_cpu_ms_per_1k", Unit: "ms", Value: jitter(50, 0.1)},
				},
			})
		}
		handover := map[string]map[string]float64{
			"monolock":      {"graceful": 0.35, "crash": 0.5, "freeze": 1800},
			"redis":         {"graceful": 95, "crash": 2060, "freeze": 2070},
			"redlock":       {"graceful": 140, "crash": 2110, "freeze": 2120},
			"redis-spin":    {"graceful": 1.1, "crash": 1650, "freeze": 1700},
			"redlock-spin":  {"graceful": 2.3, "crash": 1700, "freeze": 1750},
			"monolock-warm": {"graceful": 0.3, "crash": 0.45, "freeze": 1790},
			"monolock-tfo":  {"graceful": 0.33, "crash": 0.48, "freeze": 1795},
			"etcd":          {"graceful": 2.1, "crash": 2080, "freeze": 2090},
			"postgres":      {"graceful": 1.4, "crash": 4.5, "freeze": 30000},
		}
		for _, mode := range []string{"graceful", "crash", "freeze"} {
			for _, c := range contended {
				var trials []float64
				for range 9 {
					trials = append(trials, jitter(handover[c][mode], 0.08))
				}
				p := func(q float64) float64 {
					s := append([]float64(nil), trials...)
					for i := range s {
						for j := i + 1; j < len(s); j++ {
							if s[j] < s[i] {
								s[i], s[j] = s[j], s[i]
							}
						}
					}
					return s[int(math.Ceil(q*float64(len(s))))-1]
				}
				raw = append(raw, results.Raw{
					Scenario: "handover", Contender: c, Variant: mode, Repetition: rep,
					StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 30,
					Metrics: []results.Metric{
						{Name: "p50", Unit: "ms", Value: p(0.5)}, {Name: "p95", Unit: "ms", Value: p(0.95)},
						{Name: "max", Unit: "ms", Value: p(1)}, {Name: "failed", Unit: "count", Value: 0},
					},
					Series: []results.Series{{Name: "handover", Unit: "ms", Values: trials}},
				})
			}
		}
		// Safety: per variant, what the stores saw (synthetic).
		type safetyFig struct {
			variant, contender   string
			double, unfenced     float64
			fenced, rejected     float64 // -1: no token, no fenced figures
			marginP50, marginMin float64 // host-loss only
		}
		for _, x := range []safetyFig{
			{"pause", "monolock", 5, 5, 0, 5, 0, 0}, {"pause", "redis", 5, 5, -1, -1, 0, 0}, {"pause", "redlock", 5, 5, -1, -1, 0, 0},
			{"host-loss", "monolock", 0, 0, 0, 0, 400, 390}, {"host-loss", "redis", 0, 0, -1, -1, 530, 420}, {"host-loss", "redlock", 0, 0, -1, -1, 900, 880},
			{"clock-jump", "redis", 5, 5, -1, -1, 0, 0}, {"clock-jump-redlock", "redlock", 5, 5, -1, -1, 0, 0},
		} {
			m := []results.Metric{
				{Name: "trials", Unit: "count", Value: 5},
				{Name: "double_grants", Unit: "count", Value: x.double},
				{Name: "unsafe_writes_unfenced", Unit: "count", Value: x.unfenced},
			}
			if x.fenced >= 0 {
				m = append(m, results.Metric{Name: "unsafe_writes_fenced", Unit: "count", Value: x.fenced},
					results.Metric{Name: "fenced_rejections", Unit: "count", Value: x.rejected})
			}
			if x.variant == "pause" {
				// lease locks: the second grant came once the lease ran out
				m = append(m, results.Metric{Name: "early_grants", Unit: "count", Value: 0})
			}
			if x.variant == "host-loss" {
				m = append(m, results.Metric{Name: "learn_first_margin_p50", Unit: "ms", Value: jitter(x.marginP50, 0.05)},
					results.Metric{Name: "learn_first_margin_min", Unit: "ms", Value: jitter(x.marginMin, 0.05)},
					results.Metric{Name: "proxy_overhead_p50", Unit: "us", Value: jitter(25, 0.1)})
			}
			raw = append(raw, results.Raw{
				Scenario: "safety", Contender: x.contender, Variant: x.variant, Repetition: rep,
				StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 15, Metrics: m,
			})
		}
		fair := map[string]struct{ jain, inv, waitMS, ops, attempts float64 }{
			"monolock":      {0.999, 0, 7, 410, 1},
			"redis":         {0.82, 140, 45, 5200, 13},
			"redlock":       {0.77, 210, 80, 14000, 9},
			"redis-spin":    {0.95, 880, 30, 41000, 40},
			"redlock-spin":  {0.9, 700, 60, 90000, 35},
			"monolock-warm": {0.999, 0, 6.8, 405, 1},
			"monolock-tfo":  {0.999, 0, 6.9, 408, 1},
			"etcd":          {0.995, 0, 9, 900, 1},
			"postgres":      {0.97, 30, 8, 1500, 1},
		}
		for _, c := range contended {
			fx := fair[c]
			var clients []results.Client
			var grants int64
			for i := range 8 {
				g := int64(jitter(400, 1-fx.jain*0.98))
				grants += g
				clients = append(clients, results.Client{
					ID:     fmt.Sprintf("c%d", i),
					Counts: map[string]int64{"grants": g, "attempts": int64(float64(g) * fx.attempts)},
					Metrics: []results.Metric{
						{Name: "wait_p50", Unit: "ms", Value: jitter(fx.waitMS, 0.1)},
						{Name: "wait_p99", Unit: "ms", Value: jitter(fx.waitMS*3, 0.1)},
					},
				})
			}
			raw = append(raw, results.Raw{
				Scenario: "fairness", Contender: c, Variant: "n8", Repetition: rep,
				StartedAt: start.Add(time.Duration(len(raw)) * time.Second), Seconds: 8,
				Metrics: []results.Metric{
					{Name: "jain_index", Unit: "ratio", Value: math.Min(1, jitter(fx.jain, 0.01))},
					{Name: "fifo_inversions_per_1k", Unit: "count", Value: jitter(fx.inv, 0.1)},
					{Name: "wait_p50", Unit: "ms", Value: jitter(fx.waitMS, 0.05)},
					{Name: "wait_p99", Unit: "ms", Value: jitter(fx.waitMS*3, 0.05)},
					{Name: "wait_max", Unit: "ms", Value: jitter(fx.waitMS*6, 0.05)},
					{Name: "utilisation", Unit: "ratio", Value: jitter(0.9, 0.02)},
					{Name: "server_ops_per_sec", Unit: "1/s", Value: jitter(fx.ops, 0.05)},
					{Name: "grants", Unit: "count", Value: float64(grants)},
					{Name: "server_ops_per_grant", Unit: "count", Value: jitter(fx.ops, 0.05) * 8 / float64(grants)},
					{Name: "attempts_per_grant", Unit: "count", Value: fx.attempts},
				},
				Counts:     map[string]int64{"grants": grants, "attempts": int64(float64(grants) * fx.attempts)},
				Histograms: []results.Histogram{hist("wait", int(grants), fx.waitMS*1000, 5)},
				Clients:    clients,
			})
		}
	}
	return declared(&results.Results{
		SchemaVersion: results.SchemaVersion,
		RunID:         "test-fixture",
		StartedAt:     start,
		FinishedAt:    start.Add(20 * time.Minute),
		Environment: results.Environment{
			CPUModel: "TEST FIXTURE (synthetic numbers, not a machine)", Cores: 2, GOMAXPROCS: 2,
			Kernel: "fixture", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8",
			DockerVersion: "20.10.24", Backend: "containers",
			NetworkPath: "bridge network, container IP, no docker-proxy",
			Images: []results.Image{
				{Role: "monolock", Ref: "monolock-bench/monolock:fixture", Source: "built from the static binary (FROM scratch)"},
				{Role: "redis", Ref: "monolock-bench/redis:fixture", Source: "host redis-server packaged into scratch"},
			},
			Servers: []results.Server{{Role: "monolock", Address: "172.28.0.2:7070"}, {Role: "redis", Address: "172.28.0.3:6379", Version: "7.0.15"}},
			Command: []string{"monolock-bench", "run", "--repetitions", "3"},
		},
		Parameters: results.Parameters{
			Repetitions: 3,
			Scenarios:   []string{"latency", "throughput", "handover", "fairness", "safety"},
			Contenders:  all,
			Scenario: map[string]results.Settings{
				"latency":    {"iterations": "400", "warmup": "100"},
				"throughput": {"duration": "2s", "hold": "0s", "workers": "1,4,16,64", "shared_keys": "4"},
				"handover":   {"trials": "9"},
				"fairness":   {"clients": "8", "hold": "1ms", "think": "1ms", "duration": "8s"},
				"safety":     {"trials": "5 per variant"},
			},
			Contender: map[string]results.Settings{
				"monolock":      {"lease": "2s", "server_role": "monolock"},
				"redis":         {"lease": "2s", "server_role": "redis", "wait": "jittered 50ms-250ms", "watchdog": "ttl/3"},
				"redlock":       {"lease": "2s", "server_role": "redlock", "wait": "redsync default", "quorum": "3 of 5"},
				"redis-spin":    {"lease": "2s", "server_role": "redis", "wait": "fast-spin 500µs-1.5ms", "watchdog": "ttl/3"},
				"tcp-floor":     {"lease": "2s", "server_role": "tcp-floor"},
				"redis-floor":   {"lease": "2s", "server_role": "redis"},
				"redlock-spin":  {"lease": "2s", "server_role": "redlock", "wait": "fast-spin 500µs-1.5ms", "quorum": "3 of 5"},
				"monolock-warm": {"lease": "2s", "server_role": "monolock", "spares": "2 warm connections"},
				"monolock-tfo":  {"lease": "2s", "server_role": "monolock", "claim": "TCP Fast Open"},
				"etcd":          {"lease": "2s", "server_role": "etcd", "wait": "watch on the previous key"},
				"postgres":      {"lease": "2s", "server_role": "postgres", "acquire": "pg_advisory_lock"},
			},
		},
		Contenders: []results.ContenderInfo{
			{Name: "monolock", Label: "monolock, one connection per claim", Family: "monolock", Colour: "#1f5fbf",
				Notes: []string{"TEST FIXTURE: a single point of coordination (a design note, not measured)."}},
			{Name: "redis", Label: "Redis SET NX, jittered polling", Family: "redis", Colour: "#c8322d"},
			{Name: "redlock", Label: "Redlock over five masters", Family: "redis", Colour: "#e08a00",
				Notes: []string{"TEST FIXTURE: survives the loss of a minority of masters (a design note, not measured)."}},
			{Name: "redis-spin", Label: "Redis SET NX, fast spin", Family: "redis", ContendedOnly: true},
			{Name: "redlock-spin", Label: "Redlock, fast spin", Family: "redis", ContendedOnly: true},
			{Name: "tcp-floor", Label: "do-nothing TCP server", Family: "floor", Floor: true},
			{Name: "redis-floor", Label: "two PINGs", Family: "floor", Floor: true},
			{Name: "monolock-warm", Label: "monolock with warm spare connections", Family: "monolock"},
			{Name: "monolock-tfo", Label: "monolock with TCP Fast Open", Family: "monolock"},
			{Name: "etcd", Label: "etcd concurrency.Mutex", Family: "etcd"},
			{Name: "postgres", Label: "PostgreSQL advisory lock", Family: "postgres"},
		},
		Claims:  claimRules(),
		Summary: withBetter(results.Summarize(raw)),
		Raw: append(raw, results.Raw{Scenario: "safety", Variant: "clock-jump", Contender: "monolock", Repetition: 1,
			StartedAt: start, Skipped: "TEST FIXTURE reason"}),
		Notes: []string{"TEST FIXTURE: every number in this file is synthetic, made up to test the renderers. It is not a measurement."},
	})
}

// withBetter sets the better direction of the fixture's metrics the way a
// runner would: higher for throughput and fairness, none for counts and
// shares, lower for everything else.
func withBetter(rows []results.Row) []results.Row {
	for i, x := range rows {
		switch x.Metric {
		case "cycles_per_sec", "jain_index", "learn_first_margin_p50", "learn_first_margin_min":
			rows[i].Better = results.BetterHigher
		case "grants", "utilisation", "attempts_per_grant", "trials", "fenced_rejections", "proxy_overhead_p50":
		default:
			rows[i].Better = results.BetterLower
		}
	}
	return rows
}
