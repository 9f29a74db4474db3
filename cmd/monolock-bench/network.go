package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/bench/results"
)

// networkPlan is what --network and --networks ask: the profiles to run
// the scenarios under, in order, and per-server overrides for every
// profile but loopback.
type networkPlan struct {
	profiles []network.Profile
	hosts    map[string]network.Profile
}

// sweep reports whether the plan runs under anything but loopback.
func (p networkPlan) emulated() bool {
	for _, pr := range p.profiles {
		if !pr.IsLoopback() {
			return true
		}
	}
	return false
}

// profileKeys are the settings that continue a profile rather than start
// one; rtt starts a custom profile.
var profileKeys = []string{"jitter", "loss", "rate"}

// splitNetworks cuts a comma-separated list of profiles and overrides into
// its items: a name ("az") or "rtt=…" starts a profile, "host=…" an
// override, and jitter=, loss= and rate= continue the item before them
// ("loopback,rtt=2ms,jitter=200us,az,redlock-2=region").
func splitNetworks(list string) ([]string, error) {
	var items []string
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		key, _, _ := strings.Cut(tok, "=")
		if strings.Contains(tok, "=") && slices.Contains(profileKeys, key) {
			if len(items) == 0 {
				return nil, fmt.Errorf("%w: %q: %s= must follow a profile (rtt=…,%s or az,%s)", network.ErrProfile, list, key, tok, tok)
			}
			items[len(items)-1] += "," + tok
			continue
		}
		items = append(items, tok)
	}
	return items, nil
}

// parseNetworks reads --network (one profile) or --networks (several),
// each with optional server overrides ("az,redlock-2=region"); both empty
// is loopback alone, today's path.
func parseNetworks(one, several string) (networkPlan, error) {
	plan := networkPlan{hosts: map[string]network.Profile{}}
	list := one
	switch {
	case one != "" && several != "":
		return plan, fmt.Errorf("%w: give --network or --networks, not both", errUsage)
	case several != "":
		list = several
	case one == "":
		plan.profiles = []network.Profile{network.Loopback}
		return plan, nil
	}
	items, err := splitNetworks(list)
	if err != nil {
		return plan, fmt.Errorf("%w: %w", errUsage, err)
	}
	seen := map[string]bool{}
	for _, item := range items {
		first, _, _ := strings.Cut(item, ",")
		key, _, isKV := strings.Cut(first, "=")
		if isKV && key != "rtt" {
			host, p, err := network.ParseOverride(item)
			if err != nil {
				return plan, fmt.Errorf("%w: %w", errUsage, err)
			}
			plan.hosts[host] = p
			continue
		}
		p, err := network.Parse(item)
		if err != nil {
			return plan, fmt.Errorf("%w: %w", errUsage, err)
		}
		if seen[p.String()] {
			return plan, fmt.Errorf("%w: network profile %s given twice", errUsage, p)
		}
		seen[p.String()] = true
		plan.profiles = append(plan.profiles, p)
	}
	switch {
	case len(plan.profiles) == 0:
		return plan, fmt.Errorf("%w: %q has server overrides but no profile (e.g. az,%s)", errUsage, list, items[0])
	case one != "" && len(plan.profiles) > 1:
		return plan, fmt.Errorf("%w: --network takes one profile; for several use --networks %s", errUsage, list)
	case len(plan.hosts) > 0 && !plan.emulated():
		return plan, fmt.Errorf("%w: server overrides need a profile other than loopback", errUsage)
	}
	return plan, nil
}

// errNeedsRoot is wrapped when an emulated network is asked without root.
var errNeedsRoot = errors.New("the bench needs root for emulated hosts")

// checkNetworkPrivileges says, before anything starts, that emulated
// hosts need root.
func checkNetworkPrivileges(plan networkPlan, euid int) error {
	if !plan.emulated() || euid == 0 {
		return nil
	}
	return fmt.Errorf("%w (network namespaces, TUN devices, a real-time delay line): run monolock-bench as root (sudo), or use --network loopback", errNeedsRoot)
}

// profileLabel names a profile in results: "" for loopback (figures
// as today), else its text.
func profileLabel(p network.Profile) string {
	if p.IsLoopback() {
		return ""
	}
	return p.String()
}

// prefixEnv, when set, replaces the prefix of the names of every
// namespace and device the emulated network makes (default "mlb-"): the
// sweep at start removes only what killed runs of the same prefix left,
// so benches (or tests) with different prefixes keep apart.
const prefixEnv = "MONOLOCK_BENCH_NETWORK_PREFIX"

// startNetwork builds the emulated network of profile p for the
// deployment's servers; nil for loopback.
func startNetwork(ctx context.Context, p network.Profile, plan networkPlan, log *slog.Logger) (*network.Network, error) {
	if p.IsLoopback() {
		return nil, nil
	}
	n, err := network.New(ctx, network.Options{Profile: p, Hosts: plan.hosts, Logger: log, Prefix: os.Getenv(prefixEnv)})
	if errors.Is(err, network.ErrUnavailable) {
		return nil, fmt.Errorf("%w: %w", errNeedsRoot, err)
	}
	if err != nil {
		return nil, fmt.Errorf("network %s: %w", p, err)
	}
	return n, nil
}

// localHosts places every server of the local backend on a host of its
// own in n.
func localHosts(n *network.Network) local.Hosts {
	return func(ctx context.Context, server string) (local.Host, error) {
		return n.AddHost(ctx, server, network.HostOptions{})
	}
}

// containerHosts reserves a host of n for every server container of the
// containers backend, which attaches the container's own namespace to it.
func containerHosts(n *network.Network) containers.Hosts {
	return func(ctx context.Context, server string) (containers.Host, error) {
		return n.ReserveHost(ctx, server, network.HostOptions{})
	}
}

// clientHosts makes hosts of n for client processes, with the network's
// profile, each named after its client and numbered: a path between one
// and a server takes the farther of the two's profiles.
func clientHosts(n *network.Network) func(ctx context.Context, name string) (bench.ClientHost, error) {
	var mu sync.Mutex
	made := 0
	return func(ctx context.Context, name string) (bench.ClientHost, error) {
		mu.Lock()
		made++
		k := made
		mu.Unlock()
		h, err := n.AddHost(ctx, fmt.Sprintf("client-%s-%d", name, k), network.HostOptions{})
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

// emulatedHosts place the servers of either backend on the emulated
// network; both nil on loopback.
type emulatedHosts struct {
	local      local.Hosts
	containers containers.Hosts
}

// measureNetwork measures the path from the bench to every server of d,
// and between the members of a cluster, through n.
func measureNetwork(ctx context.Context, n *network.Network, d bench.Deployment, specs []*bench.ServerSpec, samples int) (results.NetworkRun, error) {
	p := n.Profile()
	c := n.Calibration()
	nr := results.NetworkRun{
		Profile: p.String(), AskedRTTUS: us(p.RTT), JitterUS: us(p.Jitter), Loss: p.Loss,
		LineOwnRTTUS: us(c.OwnRTT), DirectRTTUS: us(c.Direct.P50),
	}
	if comp, ok := n.Compensation(p.RTT); ok {
		nr.UncompensatedRTT, nr.CompensationUS, nr.CompensationRounds = spreadUS(comp.Uncompensated), us(comp.Subtracted), spreadUS(comp.Excess)
	}
	for _, spec := range specs {
		servers := d.Servers(spec.Name)
		var first *network.Host
		for i, s := range servers {
			h := n.Host(s.Name())
			if h == nil {
				return nr, fmt.Errorf("network: server %s has no emulated host", s.Name())
			}
			m, err := n.Measure(ctx, h, network.MeasureOptions{Addr: s.Addr(), Samples: samples})
			if err != nil {
				return nr, err
			}
			nr.Paths = append(nr.Paths, pathOf(m))
			if spec.PeerPort == 0 {
				continue
			}
			if i == 0 {
				first = h
				continue
			}
			m, err = n.Measure(ctx, h, network.MeasureOptions{From: first, Samples: samples})
			if err != nil {
				return nr, err
			}
			nr.Paths = append(nr.Paths, pathOf(m))
		}
	}
	return nr, nil
}

func pathOf(m network.Measurement) results.NetworkPath {
	return results.NetworkPath{Server: m.Host, From: m.From, Profile: m.Profile, AskedRTTUS: us(m.AskedRTT),
		SubtractedUS: us(m.Subtracted), RTT: spreadUS(m.RTT), Connect: spreadUS(m.Connect), Failed: m.Failed}
}

func spreadUS(s network.Spread) results.SpreadUS {
	return results.SpreadUS{N: s.N, P50: us(s.P50), P90: us(s.P90), Min: us(s.Min), Max: us(s.Max)}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// lineCost is the line's work between two reads of its counters.
func lineCost(before, after network.Stats) *results.LineCost {
	s := after.Sub(before)
	return &results.LineCost{
		Seconds: s.Elapsed.Seconds(), Packets: s.Packets, PacketsPerSec: s.PacketsPerSecond(),
		CPUSeconds: s.CPU.Seconds(), CPUCores: s.CPUCores(),
		Dropped: s.Dropped.Total(), LossDrops: s.Dropped.Loss, KernelDrops: s.KernelDrops,
		LateP50US: us(s.LateP50), LateP99US: us(s.LateP99), MaxQueued: s.MaxQueued,
	}
}

// measureLoopback measures TCP connects from the bench to every server of
// a loopback phase: its path's round trip (plus an accept), for the
// network section's RTT axis. Loopback has no echo listener, so no
// ping-pong.
func measureLoopback(ctx context.Context, d bench.Deployment, specs []*bench.ServerSpec, samples int) results.NetworkRun {
	nr := results.NetworkRun{Profile: network.Loopback.Name}
	for _, spec := range specs {
		for _, s := range d.Servers(spec.Name) {
			var ds []float64
			failed := 0
			for range samples {
				start := time.Now()
				var dialer net.Dialer
				dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				c, err := dialer.DialContext(dctx, "tcp", s.Addr())
				cancel()
				if err != nil {
					failed++
					continue
				}
				ds = append(ds, us(time.Since(start)))
				c.Close()
			}
			slices.Sort(ds)
			p := results.NetworkPath{Server: s.Name(), Profile: network.Loopback.Name, Failed: failed}
			if n := len(ds); n > 0 {
				at := func(q float64) float64 { return ds[min(int(q*float64(n)), n-1)] }
				p.Connect = results.SpreadUS{N: n, P50: at(0.5), P90: at(0.9), Min: ds[0], Max: ds[n-1]}
			}
			nr.Paths = append(nr.Paths, p)
		}
	}
	return nr
}
