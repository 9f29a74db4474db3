package containers

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/bench"
)

// fakeStats answers ContainerStats with a fixed engine response.
type fakeStats struct{ body string }

func (f fakeStats) ContainerStats(context.Context, string, client.ContainerStatsOptions) (client.ContainerStatsResult, error) {
	return client.ContainerStatsResult{Body: io.NopCloser(strings.NewReader(f.body))}, nil
}

func TestFootprintFromEngineStats(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       bench.Footprint
	}{
		{"v1", `{"cpu_stats":{"cpu_usage":{"total_usage":1500000000}},"memory_stats":{"usage":9000000,"stats":{"total_rss":4000000,"rss":4000000,"cache":5000000}}}`,
			bench.Footprint{Memory: bench.Memory{Total: 9000000, Anon: 4000000, Source: "cgroup v1"}, CPU: 1500000000}},
		{"v2", `{"cpu_stats":{"cpu_usage":{"total_usage":42}},"memory_stats":{"usage":8000,"stats":{"anon":3000,"file":4000}}}`,
			bench.Footprint{Memory: bench.Memory{Total: 8000, Anon: 3000, Source: "cgroup v2"}, CPU: 42}},
	} {
		got, err := engineFootprint(context.Background(), fakeStats{tc.body}, "id")
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := engineFootprint(context.Background(), fakeStats{"{"}, "id"); err == nil {
		t.Error("truncated stats did not fail")
	}
}
