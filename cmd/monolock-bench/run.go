package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/backend/external"
	"github.com/monolock/monolock-bench/bench/backend/local"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/output/report"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/run"
	"github.com/monolock/monolock-bench/bench/scenarios"
	"github.com/monolock/monolock-bench/bench/workload"
)

// Defaults of run.
const (
	defaultLease       = 2 * time.Second
	defaultRepetitions = 3
	quickRepetitions   = 1
)

// errUsage marks flag errors: exit status 2.
var errUsage = errors.New("bad usage")

// runOptions are the parsed flags of run.
type runOptions struct {
	scenarios   []bench.Scenario
	contenders  []bench.Contender
	backend     string
	kubeconfig  string // --backend kubernetes
	runID       string // set when the run starts
	quick       bool
	repetitions int
	out         string
	lease       time.Duration
	addrs       map[string]external.Addrs // external addresses by spec name
	bins        map[string]string         // local prebuilt binaries by spec name
	notes       []string
	phases      []phase // one per network profile, in run order
}

// specFlags are the per-server-spec flags of run, made from the contender
// table: external addresses (--<stem>-addr or -addrs, --<stem>-ops-addr)
// and local prebuilt binaries (--<stem>-bin).
type specFlags struct {
	spec              *bench.ServerSpec
	addrs, ops, bin   *string
	addrFlag, opsFlag string
}

func newSpecFlags(fs *flag.FlagSet, spec *bench.ServerSpec) specFlags {
	f := specFlags{spec: spec, addrFlag: spec.FlagStem() + "-addr", opsFlag: spec.FlagStem() + "-ops-addr"}
	what := fmt.Sprintf("external %s server host:port", spec.Name)
	if n := spec.Count(); n > 1 {
		f.addrFlag, f.opsFlag = f.addrFlag+"s", f.opsFlag+"s"
		what = fmt.Sprintf("%d external %s servers A,B,...", n, spec.Name)
	}
	f.addrs = fs.String(f.addrFlag, "", what+" (implies --backend external)")
	if spec.OpsPort != 0 {
		f.ops = fs.String(f.opsFlag, "", fmt.Sprintf("external %s ops HTTP host:port(s) (/metrics), optional: the coordinator's own counters for handover and fairness", spec.Name))
	}
	if spec.GoPackage != "" {
		f.bin = fs.String(spec.FlagStem()+"-bin", "", fmt.Sprintf("local backend: prebuilt %s server binary instead of go build", spec.Name))
	}
	return f
}

// parse reads the flags' values into o.
func (f specFlags) parse(o *runOptions) error {
	if f.bin != nil && *f.bin != "" {
		o.bins[f.spec.Name] = *f.bin
	}
	if *f.addrs == "" {
		return nil
	}
	a := external.Addrs{Addrs: strings.Split(*f.addrs, ",")}
	if len(a.Addrs) != f.spec.Count() || slices.Contains(a.Addrs, "") {
		return fmt.Errorf("%w: --%s wants %d comma-separated addresses, got %q", errUsage, f.addrFlag, f.spec.Count(), *f.addrs)
	}
	if f.ops != nil && *f.ops != "" {
		a.Ops = strings.Split(*f.ops, ",")
	}
	o.addrs[f.spec.Name] = a
	return nil
}

func parseRunFlags(args []string, stderr io.Writer) (*runOptions, error) {
	fs := flag.NewFlagSet("monolock-bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("monolock-bench: finding this binary for the holder process: %w", err)
	}
	allContenders := contenderTable()
	allSpecs, err := bench.Specs(allContenders)
	if err != nil {
		return nil, err
	}
	var floorNames []string
	for _, c := range allContenders {
		if c.Floor {
			floorNames = append(floorNames, c.Name)
		}
	}
	table := tableOptions{holder: holder.Command{Path: self, Args: []string{"holder"}}, client: load.Command{Path: self, Args: []string{"workload-client"}}}
	allScenarios := scenarioTable(table) // for the flags' help; made again with the chaos and workload flags below
	var (
		scenarioList  = fs.String("scenarios", "", "comma-separated scenarios; default all: "+strings.Join(names(allScenarios, scenarioName), ","))
		workloadList  = fs.String("workload", "", "comma-separated workloads, ready ("+strings.Join(workload.Ready(), ", ")+") or workload files (YAML or JSON, see bench/workload/ready/job-queue.yaml): the workload scenario runs them; alone, without --scenarios, it is the only scenario")
		contenderList = fs.String("contenders", "", "comma-separated contenders; default all: "+strings.Join(names(allContenders, contenderName), ","))
		floors        = fs.Bool("floors", true, "add the baselines "+strings.Join(floorNames, " and ")+" to the selected contenders")
		backend       = fs.String("backend", "", "containers, local, external or kubernetes; default containers when a Docker engine answers, else local")
		kubeconfig    = fs.String("kubeconfig", "", "--backend kubernetes: the cluster's kubeconfig; default the local cluster of `make cluster` when it runs")
		workers       = fs.Int("worker-pods", 2, "--backend kubernetes: the worker pods that open the idle sessions of the scale scenario's sharded variant (idle-<C>-workers<N>); 0 leaves it out")
		quick         = fs.Bool("quick", false, "every scenario and contender, short durations: a few minutes in all")
		repetitions   = fs.Int("repetitions", 0, fmt.Sprintf("repetitions of every measurement; default %d (%d with --quick)", defaultRepetitions, quickRepetitions))
		out           = fs.String("out", "", "output directory; default reports/<run-id>")
		lease         = fs.Duration("lease", defaultLease, "lease = TTL of every contender")
		chaosSeed     = fs.Uint64("chaos-seed", 0, "seed of the chaos scenario's fault schedule, the same for every contender; default 0: a random one (recorded in results.json)")
		chaosDuration = fs.Duration("chaos-duration", 0, "chaos: scale the fault counts so that the schedule spans about this long (e.g. 30m) per contender (the contenders run it one after another); default the full (or --quick) counts")
		chaosFaults   = fs.Int("chaos-faults", 0, "chaos soak: this many faults per contender of the kinds every contender takes (and clock steps in the full run's proportion, 4 to 22), one schedule for all; overrides --chaos-duration (make bench-chaos)")
		chaosParallel = fs.Int("chaos-parallel", 0, "chaos: run up to this many contenders' steps side by side (those sharing a server role one after another); default one after another")
		networkOne    = fs.String("network", "", "network profile of every server: loopback (default: no emulation), rack, az, az-lossy, region, or rtt=…[,jitter=…][,loss=…%][,rate=…]; per-server overrides follow (az,redlock-2=region,redlock-3=region); needs root and the local backend")
		networkList   = fs.String("networks", "", "a sweep: the scenarios run once per profile into one run (loopback,rack,az,region), overrides as with --network")
	)
	var perSpec []specFlags
	for _, spec := range allSpecs {
		perSpec = append(perSpec, newSpecFlags(fs, spec))
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	o := &runOptions{quick: *quick, out: *out, lease: *lease, addrs: map[string]external.Addrs{}, bins: map[string]string{}}
	if *chaosDuration < 0 {
		return nil, fmt.Errorf("%w: --chaos-duration %v < 0", errUsage, *chaosDuration)
	}
	if *chaosFaults < 0 || *chaosParallel < 0 {
		return nil, fmt.Errorf("%w: --chaos-faults %d and --chaos-parallel %d must not be negative", errUsage, *chaosFaults, *chaosParallel)
	}
	table.chaosSeed, table.chaosDuration = *chaosSeed, *chaosDuration
	table.chaosFaults, table.chaosParallel = *chaosFaults, *chaosParallel
	table.namedContenders = *contenderList != ""
	if *workers < 0 {
		return nil, fmt.Errorf("%w: --worker-pods %d < 0", errUsage, *workers)
	}
	if *backend == "kubernetes" {
		table.workers = *workers
	}
	if *workloadList != "" {
		files, err := loadWorkloads(*workloadList, stderr)
		if err != nil {
			return nil, err
		}
		table.workloads = files
		switch {
		case *scenarioList == "":
			*scenarioList = workloadScenario
		case !slices.Contains(strings.Split(*scenarioList, ","), workloadScenario):
			*scenarioList += "," + workloadScenario
		}
	}
	allScenarios = scenarioTable(table)
	if o.scenarios, err = pick(allScenarios, *scenarioList, scenarioName, "scenario"); err != nil {
		return nil, err
	}
	if o.contenders, err = pick(allContenders, *contenderList, contenderName, "contender"); err != nil {
		return nil, err
	}
	if *floors {
		for _, c := range allContenders {
			if c.Floor && !slices.ContainsFunc(o.contenders, func(x bench.Contender) bool { return x.Name == c.Name }) {
				o.contenders = append(o.contenders, c)
			}
		}
	}
	switch {
	case *repetitions < 0:
		return nil, fmt.Errorf("%w: --repetitions %d < 0", errUsage, *repetitions)
	case *repetitions > 0:
		o.repetitions = *repetitions
	case o.quick:
		o.repetitions = quickRepetitions
	default:
		o.repetitions = defaultRepetitions
	}
	if o.lease < time.Millisecond {
		return nil, fmt.Errorf("%w: --lease %v must be at least 1ms", errUsage, o.lease)
	}

	var addrFlags []string
	for _, f := range perSpec {
		if err := f.parse(o); err != nil {
			return nil, err
		}
		addrFlags = append(addrFlags, "--"+f.addrFlag)
	}
	o.backend, o.kubeconfig = *backend, *kubeconfig
	plan, err := parseNetworks(*networkOne, *networkList)
	if err != nil {
		return nil, err
	}
	if err := planPhases(o, plan, *networkOne != "" || *networkList != ""); err != nil {
		return nil, err
	}
	switch {
	case o.backend == "" && len(o.addrs) > 0:
		o.backend = "external"
	case o.backend == "external" && len(o.addrs) == 0:
		return nil, fmt.Errorf("%w: --backend external needs one of %s", errUsage, strings.Join(addrFlags, ", "))
	case o.backend != "external" && len(o.addrs) > 0:
		return nil, fmt.Errorf("%w: server addresses are for --backend external, not %q", errUsage, o.backend)
	case o.backend != "" && o.backend != "containers" && o.backend != "local" && o.backend != "external" && o.backend != "kubernetes":
		return nil, fmt.Errorf("%w: --backend %q: want containers, local, external or kubernetes", errUsage, o.backend)
	case o.kubeconfig != "" && o.backend != "kubernetes":
		return nil, fmt.Errorf("%w: --kubeconfig is for --backend kubernetes", errUsage)
	}
	if o.backend == "external" {
		// Keep the contenders whose servers were given; an explicitly
		// named one without an address is an error.
		var kept []bench.Contender
		for _, c := range o.contenders {
			switch {
			case len(o.addrs[c.Server.Name].Addrs) > 0:
				kept = append(kept, c)
			case *contenderList != "" && slices.Contains(strings.Split(*contenderList, ","), c.Name):
				return nil, fmt.Errorf("%w: contender %s needs the address of its %s server(s) with --backend external", errUsage, c.Name, c.Server.Name)
			default:
				o.notes = append(o.notes, fmt.Sprintf("contender %s skipped: no %s address given", c.Name, c.Server.Name))
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w: no contender has a server address", errUsage)
		}
		o.contenders = kept
	}
	return o, nil
}

// workloadScenario is the name of the scenario that --workload feeds.
const workloadScenario = "workload"

// recordsServers says whether a run's servers write their own record of
// their locks (ServerSpec.RecordArgs): only in a run of the chaos
// scenario alone, whose watcher reads it, since writing it costs the
// servers work that every other scenario's figures would carry.
func recordsServers(scs []bench.Scenario) bool {
	return len(scs) == 1 && scs[0].Name == scenarios.ChaosName
}

// loadWorkloads reads the workloads of --workload (ready names or file
// paths), prints their warnings to stderr, and returns a usage error that
// lists every problem of every invalid file as the package words them
// (file:line:col).
func loadWorkloads(list string, stderr io.Writer) ([]scenarios.WorkloadFile, error) {
	var files []scenarios.WorkloadFile
	var problems []string
	seen := map[string]string{}
	for _, name := range strings.Split(list, ",") {
		if name == "" {
			return nil, fmt.Errorf("%w: --workload %q: an empty name", errUsage, list)
		}
		w, warnings, err := workload.Load(name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if first, ok := seen[w.Name]; ok {
			problems = append(problems, fmt.Sprintf("workload: %s and %s are both named %q: the variants of the workload scenario need distinct names", first, name, w.Name))
			continue
		}
		seen[w.Name] = name
		for _, wn := range warnings {
			fmt.Fprintln(stderr, wn.String())
		}
		files = append(files, scenarios.WorkloadFile{Workload: w, Warnings: warnings})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: --workload:\n%s", errUsage, strings.Join(problems, "\n"))
	}
	return files, nil
}

func scenarioName(s bench.Scenario) string   { return s.Name }
func contenderName(c bench.Contender) string { return c.Name }

func names[T any](table []T, name func(T) string) []string {
	var out []string
	for _, x := range table {
		out = append(out, name(x))
	}
	return out
}

// pick selects rows of table by a comma-separated list of names, in the
// list's order; an empty list selects the whole table.
func pick[T any](table []T, list string, name func(T) string, what string) ([]T, error) {
	if list == "" {
		return table, nil
	}
	var out []T
	for _, n := range strings.Split(list, ",") {
		i := slices.IndexFunc(table, func(x T) bool { return name(x) == n })
		if i < 0 {
			return nil, fmt.Errorf("%w: unknown %s %q (known: %s)", errUsage, what, n, strings.Join(names(table, name), ","))
		}
		out = append(out, table[i])
	}
	return out, nil
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseRunFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench run: %v\n", err)
		return exitUsage
	}
	return runSuite(ctx, o, stdout, stderr)
}

// runSuite runs the suite as o says and writes its results and report.
func runSuite(ctx context.Context, o *runOptions, stdout, stderr io.Writer) int {
	log := slog.Default()
	started := time.Now()
	res := &results.Results{
		SchemaVersion: results.SchemaVersion,
		RunID:         started.UTC().Format("20060102T150405Z"),
		StartedAt:     started.UTC(),
		Environment:   host.Environment(),
		Notes:         o.notes,
	}
	res.Environment.Command = os.Args
	o.runID = res.RunID
	if o.out == "" {
		o.out = filepath.Join("reports", res.RunID)
	}

	runErr, fatal := runPhases(ctx, o, res, stderr, log)
	if fatal != nil {
		fmt.Fprintf(stderr, "monolock-bench run: %v\n", fatal)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	res.FinishedAt = time.Now().UTC()

	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "monolock-bench run: %v\n", err)
		return exitFailure
	}
	path := filepath.Join(o.out, "results.json")
	if err := res.Save(path); err != nil {
		fmt.Fprintf(stderr, "monolock-bench run: saving results: %v\n", err)
		return exitFailure
	}
	if err := report.Write(o.out, res); err != nil {
		fmt.Fprintf(stderr, "monolock-bench run: writing the report: %v\n", err)
		return exitFailure
	}
	updateIndex(o.out, stderr)
	if err := report.Summary(stdout, res); err != nil {
		return exitFailure
	}
	log.Info("monolock-bench: written", "results", path, "report", filepath.Join(o.out, report.HTMLFile), "partial", res.Partial)
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case runErr != nil:
		fmt.Fprintf(stderr, "monolock-bench run: %v\n", runErr)
		return exitFailure
	}
	return exitOK
}

// deploy starts (or, for external, checks) the servers of the selected
// contenders on the backend.
func deploy(ctx context.Context, o *runOptions, hosts emulatedHosts, log *slog.Logger) (bench.Deployment, error) {
	if o.backend == "" {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := engine.Ping(pingCtx)
		cancel()
		if err == nil {
			o.backend = "containers"
		} else {
			o.backend = "local"
			log.Warn("monolock-bench: no Docker engine answers; using the local backend", "err", err)
			o.notes = append(o.notes, "no Docker engine answered: local backend used")
		}
	}
	specs, err := bench.Specs(o.contenders)
	if err != nil {
		return nil, err
	}
	var need []string
	for _, s := range specs {
		need = append(need, s.Name)
	}
	record := recordsServers(o.scenarios)
	log.Info("monolock-bench: starting servers", "backend", o.backend, "servers", need, "record", record)
	var d bench.Deployment
	switch o.backend {
	case "containers":
		cd, err := containers.StartOn(ctx, specs, hosts.containers, record)
		if err != nil {
			return nil, fmt.Errorf("containers backend: %w", err)
		}
		d = cd
	case "local":
		ld, err := local.StartOn(ctx, specs, o.bins, hosts.local, record)
		if err != nil {
			return nil, fmt.Errorf("local backend: %w", err)
		}
		d = ld
	case "kubernetes":
		kd, err := startKubernetes(ctx, specs, o.runID, o.kubeconfig, log)
		if err != nil {
			return nil, err
		}
		d = kd
	case "external":
		ed := external.New(specs, o.addrs)
		if err := ed.Check(ctx); err != nil {
			return nil, err
		}
		d = ed
	}
	if err := run.CheckDeployment(d, o.contenders); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// serverVersions records the version of every server whose spec can tell
// it, in the environment's Servers.
func serverVersions(ctx context.Context, d bench.Deployment, cs []bench.Contender, env *results.Environment) {
	specs, _ := bench.Specs(cs) // deploy checked them
	for _, spec := range specs {
		if spec.Version == nil {
			continue
		}
		for _, s := range d.Servers(spec.Name) {
			vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			v, err := spec.Version(vctx, s.Addr())
			cancel()
			if err != nil {
				slog.Warn("monolock-bench: server version unknown", "server", s.Name(), "err", err)
				continue
			}
			for i := range env.Servers {
				if env.Servers[i].Role == s.Name() {
					env.Servers[i].Version = v
				}
			}
		}
	}
}
