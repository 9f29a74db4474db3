package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

func metricsOf(raw results.Raw) map[string]float64 {
	m := map[string]float64{}
	for _, x := range raw.Metrics {
		m[x.Name] = x.Value
	}
	return m
}

// TestScaleSmoke runs the scale scenario at small C on real servers (child
// processes) through its own code path: 40 idle holders spread over three
// source addresses (at most 15 connections per address pair), queues of
// depth 1 and 30 with promotions, and churn; the records hold what the
// servers' counters, memory and the limits show.
func TestScaleSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	contenders, d := locks(t)
	contenders = keep(contenders, dialable)
	s := ScaleConfig{
		Idle: []int{40}, LongLease: 2 * time.Second, Queue: []int{1, 30}, Churn: []int{40},
		MinWindow: 500 * time.Millisecond, Promotions: 5, ConnsPerPair: 15, Concurrency: 8,
	}.Scenario()
	if got, want := variantNames(s, false), []string{"idle-40", "queue-1", "queue-30", "churn-40"}; !slices.Equal(got, want) {
		t.Fatalf("variants %v, want %v", got, want)
	}
	res := runScenario(ctx, t, s, contenders, d, 2*time.Second)
	for _, raw := range res.Raw {
		m := metricsOf(raw)
		t.Logf("%s/%s: %v counts %v errors %v skipped %q", raw.Contender, raw.Variant, m, raw.Counts, raw.Errors, raw.Skipped)
		if raw.Skipped != "" {
			t.Errorf("%s/%s skipped: %s", raw.Contender, raw.Variant, raw.Skipped)
			continue
		}
		if raw.Counts["nofile_bench_soft"] <= 0 || raw.Counts["nofile_server1_soft"] <= 0 || raw.Counts["max_sessions"] <= 0 {
			t.Errorf("%s/%s: limits not recorded: %v", raw.Contender, raw.Variant, raw.Counts)
		}
		if _, ok := m["server_cpu_ms_per_sec"]; !ok {
			t.Errorf("%s/%s: no server CPU", raw.Contender, raw.Variant)
		}
		if m["bench_cpu_ms_per_sec"] <= 0 || raw.CPU == nil || raw.CPU.ClientMS <= 0 {
			t.Errorf("%s/%s: the bench's own CPU is not recorded (%v, %+v)", raw.Contender, raw.Variant, m["bench_cpu_ms_per_sec"], raw.CPU)
		}
		switch {
		case raw.Variant == "idle-40":
			if m["sessions_reached"] != 40 {
				t.Errorf("%s: %v sessions reached, want 40", raw.Contender, m["sessions_reached"])
			}
			if raw.Counts["address_pairs"] != 3 || raw.Counts["source_addresses"] != 3 {
				t.Errorf("%s: 40 sessions at 15 per pair spread over %d pairs (%d sources), want 3", raw.Contender, raw.Counts["address_pairs"], raw.Counts["source_addresses"])
			}
			for _, name := range []string{"server_bytes_per_session", "client_bytes_per_lock", "server_ops_per_sec"} {
				if _, ok := m[name]; !ok {
					t.Errorf("%s: no %s", raw.Contender, name)
				}
			}
			// Every holder renews its lock within the window (lease/4 at
			// a 2s lease is 500ms; a Redis watchdog's ttl/3 is 667ms and
			// the holders started spread over it).
			if m["heartbeats_per_sec"] <= 0 {
				t.Errorf("%s: no keep-alives while 40 locks were held", raw.Contender)
			}
		case strings.HasPrefix(raw.Variant, "queue-"):
			if m["promotions"] < 5 || m["promotion_p50"] <= 0 || m["promotion_p99"] < m["promotion_p50"] {
				t.Errorf("%s/%s: promotions %v p50 %v p99 %v", raw.Contender, raw.Variant, m["promotions"], m["promotion_p50"], m["promotion_p99"])
			}
			if raw.Variant == "queue-30" && m["sessions_reached"] != 31 {
				t.Errorf("%s: %v sessions in the queue variant, want 31", raw.Contender, m["sessions_reached"])
			}
		case raw.Variant == "churn-40":
			if m["grants_per_sec"] <= 0 || m["wait_p99"] < m["wait_p50"] {
				t.Errorf("%s: grants/s %v wait p50 %v p99 %v", raw.Contender, m["grants_per_sec"], m["wait_p50"], m["wait_p99"])
			}
		}
	}
}

// A session count the open-file limits cannot hold is skipped for every
// contender with a reason that names the limit and the most that fits.
func TestScaleSkipsBeyondLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	contenders, d := locks(t)
	s := ScaleConfig{Idle: []int{50_000_000}, Queue: []int{}, Churn: []int{}, MinWindow: 100 * time.Millisecond}.Scenario()
	res := runScenario(ctx, t, s, contenders[:1], d, 2*time.Second)
	if len(res.Raw) != 1 {
		t.Fatalf("%d records", len(res.Raw))
	}
	raw := res.Raw[0]
	if raw.Variant != "idle-50000k" || len(raw.Metrics) != 0 || !strings.Contains(raw.Skipped, "RLIMIT_NOFILE") || !strings.Contains(raw.Skipped, "run at most") {
		t.Fatalf("record %+v: want a skip naming RLIMIT_NOFILE and the most that fits", raw)
	}
	if raw.Counts["max_sessions"] <= 0 || raw.Counts["max_sessions"] >= 50_000_000 {
		t.Errorf("max_sessions %d", raw.Counts["max_sessions"])
	}
}

func TestScaleVariantNames(t *testing.T) {
	s := Scale()
	full := []string{"idle-1k", "idle-10k", "idle-max", "idle-50k", "idle-100k",
		"idle-1k-lease2s", "idle-10k-lease2s", "idle-max-lease2s", "idle-50k-lease2s", "idle-100k-lease2s",
		"queue-1", "queue-1k", "queue-10k", "churn-10k"}
	if got := variantNames(s, false); !slices.Equal(got, full) {
		t.Errorf("full variants %v, want %v", got, full)
	}
	quick := []string{"idle-1k", "queue-1k", "churn-1k"}
	if got := variantNames(s, true); !slices.Equal(got, quick) {
		t.Errorf("quick variants %v, want %v", got, quick)
	}
	if s.Floors {
		t.Error("floors take part in scale")
	}
	for _, v := range s.Variants(false) {
		if v.Contended != !strings.HasPrefix(v.Name, "idle-") {
			t.Errorf("%s: contended %v", v.Name, v.Contended)
		}
	}
	// The window counts whole lease/4 periods.
	c := ScaleConfig{}.withDefaults(false)
	if w := c.window(30 * time.Second); w != 7500*time.Millisecond {
		t.Errorf("window at 30s = %v, want 7.5s", w)
	}
	if w := c.window(2 * time.Second); w != 3*time.Second {
		t.Errorf("window at 2s = %v, want 3s", w)
	}
}

// Each variant declares the sessions it holds at once, and a count beyond
// the bench's own open-file limit costs the ETA nothing (it skips at once).
func TestScaleVariantSessionsAndEstimates(t *testing.T) {
	most := benchMostSessions()
	want := map[string]int{"idle-1k": 1000, "idle-100k-lease2s": 100000, "queue-10k": 10001, "churn-10k": 10000, "idle-max": min(most, 100000)}
	for _, v := range Scale().Variants(false) {
		if n, ok := want[v.Name]; ok && v.Sessions != n {
			t.Errorf("%s: %d sessions, want %d", v.Name, v.Sessions, n)
		}
		if beyond := v.Sessions > most; beyond != (v.Estimate == 0) {
			t.Errorf("%s: %d sessions (the bench allows %d), estimate %v", v.Name, v.Sessions, most, v.Estimate)
		}
	}
}

// A contender whose Locker cannot have C sessions at once (a connection
// pool) is skipped at once, with its reason, rather than waiting for the
// time cap.
func TestScaleSkipsBeyondMaxSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	contenders, d := locks(t)
	c := contenders[0]
	c.MaxSessions, c.MaxSessionsReason = 10, "a pool of 10 connections"
	s := ScaleConfig{Idle: []int{20}, Queue: []int{9}, Churn: []int{}, MinWindow: 100 * time.Millisecond}.Scenario()
	res := runScenario(ctx, t, s, []bench.Contender{c}, d, 2*time.Second)
	for _, raw := range res.Raw {
		switch raw.Variant {
		case "idle-20":
			if !strings.Contains(raw.Skipped, "20 sessions exceed the 10 sessions") || !strings.Contains(raw.Skipped, "a pool of 10 connections") {
				t.Errorf("idle-20: skipped %q, want the sessions limit and its reason", raw.Skipped)
			}
		case "queue-9": // 10 sessions: within the limit
			if raw.Skipped != "" {
				t.Errorf("queue-9 skipped: %s", raw.Skipped)
			}
		}
	}
}

// A variant's own time cap turns into a record; the run's end stays an
// error.
func TestTimeCapped(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-expired.Done()
	ended, end := context.WithCancel(live)
	end()
	capped, cancelCapped := context.WithTimeout(ended, 0)
	defer cancelCapped()
	for _, tt := range []struct {
		name       string
		outer, ctx context.Context
		err        error
		want       bool
	}{
		{"cap reached", live, expired, context.DeadlineExceeded, true},
		{"cap reached, wrapped error", live, expired, fmt.Errorf("reading counters: %w", context.DeadlineExceeded), true},
		{"no error", live, expired, nil, false},
		{"run ended", ended, capped, context.Canceled, false},
		{"other error before the cap", live, live, errors.New("boom"), false},
	} {
		if got := timeCapped(tt.outer, tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	s := &setup{counts: map[string]int64{}}
	raw, err := s.overCap(live, expired, 10001, "the measuring window", context.DeadlineExceeded)
	if err != nil || !strings.Contains(raw.Skipped, "time cap") || metricsOf(raw)["sessions_reached"] != 10001 {
		t.Errorf("overCap: %+v, %v", raw, err)
	}
	if _, err := s.overCap(ended, capped, 1, "x", context.Canceled); err == nil {
		t.Error("the run's end became a record")
	}
}
