package shard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/results"
)

// handMade is a shard report whose acquire histogram holds values.
func handMade(t *testing.T, shard int, host string, held, lost int, open time.Duration, values ...int64) Report {
	t.Helper()
	h := hdrhistogram.New(1, acquireMax, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := results.NewHistogram("acquire", "us", h)
	if err != nil {
		t.Fatal(err)
	}
	return Report{Shard: shard, Host: host, Sessions: held + lost, Held: held, Lost: lost, OpenTime: open, CPU: time.Second, Acquire: snap}
}

// TestMerge merges hand-made shards: counts add up, the open time is the
// slowest shard's, and the histogram is the union of the shards' values,
// so its quantiles are those of all values, not an average of the
// shards' quantiles.
func TestMerge(t *testing.T) {
	fast := make([]int64, 90)
	for i := range fast {
		fast[i] = 100 // µs
	}
	slow := []int64{10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000}
	m, err := Merge([]Report{
		handMade(t, 0, "worker-b", 90, 0, 2*time.Second, fast...),
		handMade(t, 1, "worker-a", 10, 5, 3*time.Second, slow...),
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Workers != 2 || m.Sessions != 105 || m.Held != 100 || m.Lost != 5 || m.CPU != 2*time.Second {
		t.Errorf("merged counts: %+v", m)
	}
	if m.OpenTime != 3*time.Second {
		t.Errorf("open time %v, want the slowest shard's 3s", m.OpenTime)
	}
	if got := m.Hosts; len(got) != 2 || got[0] != "worker-a" || got[1] != "worker-b" {
		t.Errorf("hosts %v", got)
	}
	if n := m.Acquire.TotalCount(); n != 100 {
		t.Errorf("merged histogram holds %d values, want 100", n)
	}
	// p50 of all values is a fast one, p95 a slow one; averaging the
	// shards' medians would give about 5 ms.
	if p50 := m.Acquire.ValueAtQuantile(50); p50 > 101 {
		t.Errorf("merged p50 %d µs, want 100", p50)
	}
	if p95 := m.Acquire.ValueAtQuantile(95); p95 < 9_990 {
		t.Errorf("merged p95 %d µs, want about 10,000", p95)
	}
}

func TestMergeRefuses(t *testing.T) {
	if _, err := Merge(nil); err == nil {
		t.Error("no reports: no error")
	}
	r := handMade(t, 0, "w", 1, 0, time.Second, 5)
	if _, err := Merge([]Report{r, r}); err == nil {
		t.Error("one shard twice: no error")
	}
}

// TestReadReport finds the report among a worker pod's log lines.
func TestReadReport(t *testing.T) {
	r := handMade(t, 1, "w", 3, 0, time.Second, 7)
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte("time=... level=INFO msg=opening\n"), line...), "\ntime=... level=INFO msg=closed\n"...)
	got, err := ReadReport(out)
	if err != nil || got.Shard != 1 || got.Held != 3 {
		t.Errorf("ReadReport: %+v, %v; want shard 1 holding 3", got, err)
	}
	if _, err := ReadReport([]byte("level=ERROR msg=failed\n")); err == nil {
		t.Error("an output without a report: no error")
	}
}
