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
	"github.com/monolock/monolock-bench/bench/containerbackend"
	"github.com/monolock/monolock-bench/bench/containers"
	"github.com/monolock/monolock-bench/bench/external"
	"github.com/monolock/monolock-bench/bench/holder"
	"github.com/monolock/monolock-bench/bench/local"
	"github.com/monolock/monolock-bench/bench/markdown"
	"github.com/monolock/monolock-bench/bench/report"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/redisbench"
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
	quick       bool
	repetitions int
	out         string
	lease       time.Duration
	addrs       map[string][]string // external addresses by role
	monolockBin string
	tcpfloorBin string
	notes       []string
}

func parseRunFlags(args []string, stderr io.Writer) (*runOptions, error) {
	fs := flag.NewFlagSet("monolock-bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("monolock-bench: finding this binary for the holder process: %w", err)
	}
	allScenarios := scenarioTable(holder.Command{Path: self, Args: []string{"holder"}})
	allContenders := contenderTable()
	var (
		scenarioList  = fs.String("scenarios", "", "comma-separated scenarios; default all: "+strings.Join(names(allScenarios, scenarioName), ","))
		contenderList = fs.String("contenders", "", "comma-separated contenders; default all: "+strings.Join(names(allContenders, contenderName), ","))
		floors        = fs.Bool("floors", true, "add the baselines tcp-floor and redis-floor to the selected contenders")
		backend       = fs.String("backend", "", "containers, local or external; default containers when a Docker engine answers, else local")
		quick         = fs.Bool("quick", false, "every scenario and contender, short durations: a few minutes in all")
		repetitions   = fs.Int("repetitions", 0, fmt.Sprintf("repetitions of every measurement; default %d (%d with --quick)", defaultRepetitions, quickRepetitions))
		out           = fs.String("out", "", "output directory; default reports/<run-id>")
		lease         = fs.Duration("lease", defaultLease, "lease (monolock) = TTL (redis, redlock) of every contender")
		monolockAddr  = fs.String("monolock-addr", "", "external monolock server host:port (implies --backend external)")
		monolockOps   = fs.String("monolock-ops-addr", "", "external monolock ops HTTP host:port (/metrics), optional: the coordinator's own counters for handover and fairness")
		redisAddr     = fs.String("redis-addr", "", "external Redis host:port (implies --backend external)")
		redlockAddrs  = fs.String("redlock-addrs", "", "five external Redis masters A,B,C,D,E (implies --backend external)")
		tcpfloorAddr  = fs.String("tcpfloor-addr", "", "external tcp-floor server host:port (implies --backend external)")
		monolockBin   = fs.String("monolock-bin", "", "local backend: prebuilt monolock server binary instead of go build")
		tcpfloorBin   = fs.String("tcpfloor-bin", "", "local backend: prebuilt tcpfloor binary instead of go build")
	)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	o := &runOptions{quick: *quick, out: *out, lease: *lease, monolockBin: *monolockBin, tcpfloorBin: *tcpfloorBin}
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

	o.addrs = map[string][]string{}
	for role, a := range map[string]string{bench.RoleMonolock: *monolockAddr, bench.RoleMonolockOps: *monolockOps, bench.RoleRedis: *redisAddr, bench.RoleTCPFloor: *tcpfloorAddr} {
		if a != "" {
			o.addrs[role] = []string{a}
		}
	}
	if *redlockAddrs != "" {
		masters := strings.Split(*redlockAddrs, ",")
		if len(masters) != local.RedlockMasters || slices.Contains(masters, "") {
			return nil, fmt.Errorf("%w: --redlock-addrs wants %d comma-separated addresses, got %q", errUsage, local.RedlockMasters, *redlockAddrs)
		}
		o.addrs[bench.RoleRedlock] = masters
	}
	o.backend = *backend
	switch {
	case o.backend == "" && len(o.addrs) > 0:
		o.backend = "external"
	case o.backend == "external" && len(o.addrs) == 0:
		return nil, fmt.Errorf("%w: --backend external needs --monolock-addr, --redis-addr, --redlock-addrs or --tcpfloor-addr", errUsage)
	case o.backend != "external" && len(o.addrs) > 0:
		return nil, fmt.Errorf("%w: server addresses are for --backend external, not %q", errUsage, o.backend)
	case o.backend != "" && o.backend != "containers" && o.backend != "local" && o.backend != "external":
		return nil, fmt.Errorf("%w: --backend %q: want containers, local or external", errUsage, o.backend)
	}
	if o.backend == "external" {
		// Keep the contenders whose servers were given; an explicitly
		// named one without an address is an error.
		var kept []bench.Contender
		for _, c := range o.contenders {
			switch {
			case len(o.addrs[c.Role]) > 0:
				kept = append(kept, c)
			case *contenderList != "" && slices.Contains(strings.Split(*contenderList, ","), c.Name):
				return nil, fmt.Errorf("%w: contender %s needs the address of its %s server(s) with --backend external", errUsage, c.Name, c.Role)
			default:
				o.notes = append(o.notes, fmt.Sprintf("contender %s skipped: no %s address given", c.Name, c.Role))
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w: no contender has a server address", errUsage)
		}
		o.contenders = kept
	}
	return o, nil
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
	return run(ctx, o, stdout, stderr)
}

func run(ctx context.Context, o *runOptions, stdout, stderr io.Writer) int {
	log := slog.Default()
	started := time.Now()
	res := &results.Results{
		SchemaVersion: results.SchemaVersion,
		RunID:         started.UTC().Format("20060102T150405Z"),
		StartedAt:     started.UTC(),
		Environment:   bench.HostEnvironment(),
		Notes:         o.notes,
	}
	res.Environment.Command = os.Args
	if o.out == "" {
		o.out = filepath.Join("reports", res.RunID)
	}

	d, err := deploy(ctx, o, log)
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench run: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailure
	}
	defer func() {
		if err := d.Close(); err != nil {
			log.Error("monolock-bench: removing servers", "err", err)
		}
	}()
	d.Describe(&res.Environment)
	res.Environment.RedisVersion = redisVersion(ctx, d)

	runner := &bench.Runner{
		Scenarios: o.scenarios, Contenders: o.contenders, Deployment: d,
		Repetitions: o.repetitions, Quick: o.quick, Lease: o.lease, Logger: log,
	}
	closeProgress := func() {}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		bar := newBarProgress(stderr)
		runner.Progress, closeProgress = bar, bar.Close
	} else {
		runner.Progress = &lineProgress{w: stderr}
	}
	log.Info("monolock-bench: running", "backend", res.Environment.Backend, "scenarios", len(o.scenarios),
		"contenders", len(o.contenders), "repetitions", o.repetitions, "out", o.out)
	runErr := runner.Run(ctx, res)
	closeProgress()
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
	if err := markdown.Summary(stdout, res); err != nil {
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

// roles lists the server roles the selected contenders need.
func roles(cs []bench.Contender) []string {
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.Role) {
			out = append(out, c.Role)
		}
	}
	return out
}

// deploy starts (or, for external, checks) the servers of the backend.
func deploy(ctx context.Context, o *runOptions, log *slog.Logger) (bench.Deployment, error) {
	if o.backend == "" {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := containers.Ping(pingCtx)
		cancel()
		if err == nil {
			o.backend = "containers"
		} else {
			o.backend = "local"
			log.Warn("monolock-bench: no Docker engine answers; using the local backend", "err", err)
			o.notes = append(o.notes, "no Docker engine answered: local backend used")
		}
	}
	need := roles(o.contenders)
	log.Info("monolock-bench: starting servers", "backend", o.backend, "roles", need)
	var d bench.Deployment
	switch o.backend {
	case "containers":
		cd, err := containerbackend.Start(ctx, need)
		if err != nil {
			return nil, fmt.Errorf("containers backend: %w", err)
		}
		d = cd
	case "local":
		ld, err := local.Start(ctx, local.Config{Roles: need, MonolockBin: o.monolockBin, TCPFloorBin: o.tcpfloorBin})
		if err != nil {
			return nil, fmt.Errorf("local backend: %w", err)
		}
		d = ld
	case "external":
		ed := external.New(o.addrs)
		if err := ed.Check(ctx); err != nil {
			return nil, err
		}
		d = ed
	}
	if err := bench.CheckDeployment(d, o.contenders); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// redisVersion asks the first Redis of the deployment for its version.
func redisVersion(ctx context.Context, d bench.Deployment) string {
	for _, role := range []string{bench.RoleRedis, bench.RoleRedlock} {
		if a := d.Addrs(role); len(a) > 0 {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			v, err := redisbench.ServerVersion(ctx, a[0])
			if err != nil {
				slog.Warn("monolock-bench: Redis version unknown", "err", err)
				return ""
			}
			return v
		}
	}
	return ""
}
