package containers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
)

// statsAPI is the part of the Docker engine client (*client.Client) that
// engineFootprint uses.
type statsAPI interface {
	ContainerStats(ctx context.Context, id string, opts client.ContainerStatsOptions) (client.ContainerStatsResult, error)
}

// engineFootprint samples the cgroup of container id through the engine's
// stats, once (no one-second wait): the cgroup's usage, its anonymous
// memory and its CPU time. The engine reads the same cgroup files as
// host.CgroupMemory, from the host's side, where this process may not see
// them.
func engineFootprint(ctx context.Context, api statsAPI, id string) (bench.Footprint, error) {
	res, err := api.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return bench.Footprint{}, fmt.Errorf("containers: stats of %s: %w", id, err)
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return bench.Footprint{}, fmt.Errorf("containers: stats of %s: %w", id, err)
	}
	return bench.Footprint{
		Memory: host.CgroupStatMemory(st.MemoryStats.Usage, st.MemoryStats.Stats),
		CPU:    time.Duration(st.CPUStats.CPUUsage.TotalUsage),
	}, nil
}
