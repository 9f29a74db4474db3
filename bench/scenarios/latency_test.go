package scenarios

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/load"
)

func TestBlockOrderAlternates(t *testing.T) {
	if got := blockOrder(3, 0); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("block 0: %v", got)
	}
	if got := blockOrder(3, 1); !slices.Equal(got, []int{2, 1, 0}) {
		t.Errorf("block 1: %v", got)
	}
}

// latencyRaw keeps each block's median, gives the interval of their
// median and pools the blocks' cycles for the percentiles.
func TestLatencyRawFromBlocks(t *testing.T) {
	var blocks []load.Measurement
	for _, us := range []int64{50, 10, 40, 20, 30, 60} { // one latency per block, 10 cycles each
		rec := load.NewRecorder()
		for range 10 {
			_ = rec.Acquire.RecordValue(us * int64(time.Microsecond))
			_ = rec.Cycle.RecordValue(2 * us * int64(time.Microsecond))
			rec.Cycles++
		}
		blocks = append(blocks, load.Measurement{Rec: rec, Elapsed: time.Second, Changes: map[string]int64{"tcp_fastopen_active": 10}, Levels: map[string]int64{"time_wait_sockets": us}})
	}
	raw, err := latencyRaw(blocks, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	// HdrHistogram keeps 3 significant digits: round to whole us.
	m := map[string]float64{}
	for _, x := range raw.Metrics {
		m[x.Name] = math.Round(x.Value)
	}
	// Six blocks: the interval is the whole range (96.9%).
	if m["blocks"] != 6 || m["acquire_p50_ci_lo"] != 10 || m["acquire_p50_ci_hi"] != 60 || m["cycle_p50_ci_hi"] != 120 {
		t.Errorf("metrics %v", m)
	}
	if p50 := m["acquire_p50"]; p50 != 30 {
		t.Errorf("pooled acquire p50 %v us, want 30", p50)
	}
	if raw.Counts["cycles"] != 60 || raw.Counts["iterations_per_worker"] != 60 || raw.Counts["tcp_fastopen_active"] != 60 || raw.Counts["time_wait_sockets"] != 60 || raw.Seconds != 6 {
		t.Errorf("counts %v seconds %v", raw.Counts, raw.Seconds)
	}
	var medians []float64
	for _, v := range raw.Series[0].Values {
		medians = append(medians, math.Round(v))
	}
	if len(raw.Series) != 2 || !slices.Equal(medians, []float64{50, 10, 40, 20, 30, 60}) {
		t.Errorf("series %+v, want the blocks' medians in run order", raw.Series)
	}
}
