package scenarios

import (
	"slices"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

func variantNames(s bench.Scenario, quick bool) []string {
	var names []string
	for _, v := range s.Variants(quick) {
		names = append(names, v.Name)
	}
	return names
}

// The variant names are the spec's table ("Interfaces that stay stable");
// the quick suite runs fewer points of the curves (its time budget).
func TestVariantNames(t *testing.T) {
	tests := []struct {
		s           bench.Scenario
		full, quick []string
	}{
		{Latency(), []string{"w1", "w8", "open-25pct", "open-50pct", "open-75pct", "open-500"}, []string{"w1", "w8", "open-50pct", "open-500"}},
		{Throughput(), []string{"distinct-w1", "distinct-w4", "distinct-w16", "distinct-w64", "shared-w16"}, []string{"distinct-w1", "distinct-w16", "distinct-w64", "shared-w16"}},
		{ThroughputConfig{DistinctWorkers: []int{2}, SharedWorkers: 3}.Scenario(), []string{"distinct-w2", "shared-w3"}, []string{"distinct-w2", "shared-w3"}},
	}
	for _, tt := range tests {
		for quick, want := range map[bool][]string{false: tt.full, true: tt.quick} {
			if got := variantNames(tt.s, quick); !slices.Equal(got, want) {
				t.Errorf("%s quick=%v: variants %v, want %v", tt.s.Name, quick, got, want)
			}
		}
		if !tt.s.Floors {
			t.Errorf("%s: floors must take part", tt.s.Name)
		}
	}
	for _, v := range Throughput().Variants(false) {
		if v.Contended != (v.Name == "shared-w16") {
			t.Errorf("%s: contended=%v", v.Name, v.Contended)
		}
	}
}

func TestQuickIsShorter(t *testing.T) {
	for _, s := range []bench.Scenario{Latency(), Throughput()} {
		var full, quick time.Duration
		for _, v := range s.Variants(false) {
			full += v.Estimate
		}
		for _, v := range s.Variants(true) {
			quick += v.Estimate
		}
		// At most half: a step's fixed cost (opening, closing) stays.
		if quick*2 > full {
			t.Errorf("%s: quick estimate %v is not well below full %v", s.Name, quick, full)
		}
		if s.Settings(true)["warmup"] == s.Settings(false)["warmup"] {
			t.Errorf("%s: quick keeps the full warm-up", s.Name)
		}
	}
}

// Keys are 4 bytes for every worker count the scenarios use: the tcp-floor
// server reads exactly one 12-byte frame.
func TestKeysAreFourBytes(t *testing.T) {
	for i := range 64 {
		for _, k := range []string{DistinctKey(i), SharedKey(i, 4)} {
			if len(k) != 4 {
				t.Fatalf("key %q is %d bytes", k, len(k))
			}
		}
	}
	if DistinctKey(3) == DistinctKey(4) || SharedKey(1, 4) != SharedKey(5, 4) {
		t.Fatal("distinct keys collide or shared keys do not repeat")
	}
}
