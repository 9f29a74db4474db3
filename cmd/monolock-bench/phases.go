package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/network"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/run"
)

// quickProfile is the one emulated profile the quick suite adds, for its
// quickScenario only: a round trip as between availability zones.
var quickProfile, quickScenario = network.AZ, "latency"

// oneWorkerOnly keeps a scenario's closed-loop variant of one worker:
// under the quick suite's emulated profile the latency of one acquire;
// its other variants (w8 and the open-loop points, about 40s in all on a
// 2-core machine) do not fit the quick suite's budget.
func oneWorkerOnly(s bench.Scenario) bench.Scenario {
	variants := s.Variants
	s.Variants = func(quick bool) []bench.Variant {
		return slices.DeleteFunc(variants(quick), func(v bench.Variant) bool {
			return v.Params.Load != results.LoadClosed || v.Params.Workers != 1
		})
	}
	return s
}

// comparedAt keeps the contenders that a claim under profile compares
// (its subject or its bound) and the floors. Starting all of them on
// emulated hosts for one latency step made the quick suite's profile
// phase take about a minute (quick run 20261207T091920Z: 23 s to start
// and measure 20 contenders' paths, 16 s of steps, ZooKeeper's and
// etcd's 7.6 s of them); its claims need monolock's variants and Redis.
func comparedAt(cs []bench.Contender, profile string) []bench.Contender {
	named := map[string]bool{}
	for _, c := range cs {
		for _, r := range c.Claims {
			if r.Network == profile {
				named[r.Subject], named[r.Than.Contender] = true, true
			}
		}
	}
	return slices.DeleteFunc(slices.Clone(cs), func(c bench.Contender) bool { return !c.Floor && !named[c.Name] })
}

func contenderNames(cs []bench.Contender) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

// pathMeasureTime is about how long the round trips measured on one path
// of an emulated network take.
const pathMeasureTime = 100 * time.Millisecond

// phase is one network profile of a run: its scenarios under it.
type phase struct {
	profile   network.Profile
	hosts     map[string]network.Profile
	scenarios []bench.Scenario
	// backend, when set, replaces the run's for this phase (the quick
	// suite's emulated profile runs on the local backend whatever the
	// loopback phase runs on).
	backend string
	// contenders, when set, replaces the run's for this phase (the quick
	// suite's emulated profile runs those its claims compare).
	contenders []bench.Contender
}

// planPhases turns the network plan into o.phases. Emulated hosts run on
// the local backend (the default) or the containers backend; external
// servers cannot be moved onto them.
// Without --network or --networks the quick suite adds quickProfile for
// quickScenario on the local backend when the bench runs as root and its
// servers are not external, and says in a note when it cannot.
func planPhases(o *runOptions, plan networkPlan, asked bool) error {
	if !asked && o.quick {
		i := slices.IndexFunc(o.scenarios, func(s bench.Scenario) bool { return s.Name == quickScenario })
		switch {
		case i < 0:
		case os.Geteuid() != 0:
			o.notes = append(o.notes, fmt.Sprintf("quick suite: %s under the %s network profile not run: %v", quickScenario, quickProfile.Name, checkNetworkPrivileges(networkPlan{profiles: []network.Profile{quickProfile}}, os.Geteuid())))
		case o.backend == "external" || len(o.addrs) > 0:
			o.notes = append(o.notes, fmt.Sprintf("quick suite: %s under the %s network profile not run: external servers cannot be put on emulated hosts", quickScenario, quickProfile.Name))
		case o.backend == "kubernetes":
			o.notes = append(o.notes, fmt.Sprintf("quick suite: %s under the %s network profile not run: the kubernetes backend's servers are pods on the cluster's own network, not on emulated hosts", quickScenario, quickProfile.Name))
		default:
			o.phases = []phase{{profile: network.Loopback, scenarios: o.scenarios},
				{profile: quickProfile, scenarios: []bench.Scenario{oneWorkerOnly(o.scenarios[i])}, backend: "local",
					contenders: comparedAt(o.contenders, quickProfile.Name)}}
			return nil
		}
	}
	if err := checkNetworkPrivileges(plan, os.Geteuid()); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if plan.emulated() {
		switch o.backend {
		case "":
			o.backend = "local"
		case "local", "containers":
		default:
			return fmt.Errorf("%w: emulated network profiles run on --backend local or containers only (each server in a network namespace of its own); --backend %s cannot take them", errUsage, o.backend)
		}
	}
	for _, p := range plan.profiles {
		o.phases = append(o.phases, phase{profile: p, hosts: plan.hosts, scenarios: underRTT(o.scenarios, p.RTT)})
	}
	return nil
}

// underRTT returns the scenarios as they run under a profile of RTT rtt:
// the throughput scenario's window scales with it.
func underRTT(scs []bench.Scenario, rtt time.Duration) []bench.Scenario {
	out := slices.Clone(scs)
	for i, s := range out {
		if s.Name == throughputScenario && rtt > 0 {
			out[i] = throughput(rtt)
		}
	}
	return out
}

// runPhases runs every phase into res: the first fills it as a run on
// one profile does, the later ones add their records. fatal is a failure
// of the first phase to start its servers; a later phase that cannot
// start is noted and makes runErr.
func runPhases(ctx context.Context, o *runOptions, res *results.Results, stderr io.Writer, log *slog.Logger) (runErr, fatal error) {
	if len(o.phases) == 0 { // options built without the network flags: today's path
		o.phases = []phase{{profile: network.Loopback, scenarios: o.scenarios}}
	}
	sweep := len(o.phases) > 1 || !o.phases[0].profile.IsLoopback()
	var errs []error
	for i, ph := range o.phases {
		part := res
		if i > 0 {
			part = &results.Results{}
		}
		nr, startErr, err := runPhase(ctx, o, ph, part, i == 0, stderr, log)
		if i == 0 && startErr != nil {
			return nil, startErr
		}
		err = errors.Join(startErr, err)
		if sweep {
			res.Networks = append(res.Networks, nr)
		}
		if i > 0 {
			res.Raw = append(res.Raw, part.Raw...)
			res.Notes = append(res.Notes, part.Notes...)
			if part.Partial {
				res.Partial, res.PartialReason = true, part.PartialReason+" (network "+ph.profile.String()+")"
			}
		}
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("network %s: %v", ph.profile, err))
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	res.Summary = results.Summarize(res.Raw)
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d network phases failed, first: %w", len(errs), len(o.phases), errs[0]), nil
	}
	return nil, nil
}

// runPhase starts the phase's network and servers, measures the paths,
// runs the scenarios and stops everything again; startErr is a failure
// before any scenario ran.
func runPhase(ctx context.Context, o *runOptions, ph phase, res *results.Results, first bool, stderr io.Writer, log *slog.Logger) (nr results.NetworkRun, startErr, runErr error) {
	nr = results.NetworkRun{Profile: ph.profile.String()}
	n, err := startNetwork(ctx, ph.profile, networkPlan{hosts: ph.hosts}, log)
	if err != nil {
		return nr, err, nil
	}
	var hosts emulatedHosts
	if n != nil {
		defer n.Close()
		hosts = emulatedHosts{local: localHosts(n), containers: containerHosts(n)}
		log.Info("monolock-bench: emulated network", "profile", ph.profile.String(),
			"line_own_rtt", n.Calibration().OwnRTT.String())
	}
	// A phase may run on another backend or fewer contenders than the run.
	if ph.backend != "" && ph.backend != o.backend {
		c := *o
		c.backend = ph.backend
		o = &c
		res.Notes = append(res.Notes, fmt.Sprintf("network %s: servers on the %s backend (emulated hosts)", ph.profile, ph.backend))
	}
	if ph.contenders != nil {
		c := *o
		c.contenders = ph.contenders
		o = &c
		res.Notes = append(res.Notes, fmt.Sprintf("network %s: only the contenders its claims compare, and the floors: %s", ph.profile, strings.Join(contenderNames(ph.contenders), ", ")))
	}
	d, err := deploy(ctx, o, hosts, log)
	if err != nil {
		return nr, err, nil
	}
	defer func() {
		if err := d.Close(); err != nil {
			log.Error("monolock-bench: removing servers", "err", err)
		}
	}()
	if first {
		d.Describe(&res.Environment)
		serverVersions(ctx, d, o.contenders, &res.Environment)
	}
	var before network.Stats
	specs, _ := bench.Specs(o.contenders) // deploy checked them
	samples := 50
	if o.quick {
		samples = 20
	}
	if n == nil {
		nr = measureLoopback(ctx, d, specs, samples)
	} else {
		for name := range ph.hosts {
			if n.Host(name) == nil {
				var names []string
				for _, h := range n.Hosts() {
					names = append(names, h.Name())
				}
				slices.Sort(names)
				return nr, fmt.Errorf("%w: the network override %s=… names no server of this run (servers: %s)", errUsage, name, strings.Join(names, ", ")), nil
			}
		}
		// Round trips are what the report's asked-vs-measured rests on:
		// about 100 ms of them per path, 20 at least.
		samples = min(max(int(pathMeasureTime/max(ph.profile.RTT, 1)), 20), 100)
		if nr, err = measureNetwork(ctx, n, d, specs, samples); err != nil {
			return nr, err, nil
		}
		for _, p := range nr.Paths {
			log.Info("monolock-bench: path measured", "server", p.Server, "from", p.From, "asked_rtt_us", p.AskedRTTUS,
				"rtt_p50_us", p.RTT.P50, "connect_p50_us", p.Connect.P50)
		}
		if before, err = n.Stats(); err != nil {
			return nr, err, nil
		}
	}
	var env results.Environment
	d.Describe(&env)
	nr.Backend, nr.NetworkPath = env.Backend, env.NetworkPath
	runner := &run.Runner{
		Scenarios: ph.scenarios, Contenders: o.contenders, Deployment: d,
		Repetitions: o.repetitions, Quick: o.quick, Lease: o.lease, OutDir: o.out, Logger: log,
		Network: profileLabel(ph.profile),
	}
	if n != nil {
		runner.ClientHost = clientHosts(n)
		runner.Line = func() func() *results.LineCost {
			before, err := n.Stats()
			if err != nil {
				return nil
			}
			return func() *results.LineCost {
				after, err := n.Stats()
				if err != nil {
					return nil
				}
				return lineCost(before, after)
			}
		}
	}
	closeProgress := func() {}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		bar := newBarProgress(stderr)
		runner.Progress, closeProgress = bar, bar.Close
	} else {
		runner.Progress = &lineProgress{w: stderr}
	}
	log.Info("monolock-bench: running", "backend", o.backend, "network", ph.profile.String(), "scenarios", len(ph.scenarios),
		"contenders", len(o.contenders), "repetitions", o.repetitions, "out", o.out)
	runErr = runner.Run(ctx, res)
	closeProgress()
	if n != nil {
		if after, err := n.Stats(); err == nil {
			nr.Line = lineCost(before, after)
		}
	}
	return nr, nil, runErr
}
