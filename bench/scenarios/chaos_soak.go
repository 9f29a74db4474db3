package scenarios

// The chaos scenario's soak: clients under the nemesis schedule, the holder
// they follow, and the final reads that close the history.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/faults/holder"
	"github.com/monolock/monolock-bench/bench/faults/nemesis"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/results"
)

// soak starts the clients, runs the schedule and the tail, stops the
// clients and reads the counters, leaving every history file in s.dir.
func (s *chaosStep) soak(ctx context.Context, cfg ChaosConfig, sched nemesis.Schedule, t chaosTargets) ([]nemesis.Outcome, error) {
	proxy := faultproxy.New()
	defer proxy.Close()
	var procs []*holder.Process
	stopped := false
	stopClients := func() {
		if stopped {
			return
		}
		stopped = true
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Go(p.Close) // SIGCONT, EOF, SIGKILL after the grace
		}
		wg.Wait()
	}
	defer stopClients()
	// The watcher starts before the clients, so that their first grants
	// are in the servers' record.
	stopWatch, err := s.watchLock(ctx, t.running)
	if err != nil {
		return nil, err
	}
	defer stopWatch()
	var clients []nemesis.Client
	holders := &holderTracker{held: map[int]int64{}}
	for i := range cfg.clients() {
		name := fmt.Sprintf("c%d", i+1)
		view, err := proxy.View(name, t.addrs)
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, readyTimeout)
		p, err := holder.StartChaos(sctx, cfg.Holder, holder.ChaosSpec{
			Contender: s.env.Contender.Name, Addrs: view.Addrs(), Lease: s.env.Lease, Key: s.key,
			Client: name, History: filepath.Join(s.dir, name+".jsonl"),
			Fenced: s.fenced.Addr(), Unfenced: s.unfenced.Addr(), Seed: sched.Config.Seed + uint64(i) + 1,
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("chaos: starting client %s: %w", name, err)
		}
		procs = append(procs, p)
		p.Follow(holders.follow(i + 1))
		links := make([]nemesis.Link, len(view.Links))
		for j, l := range view.Links {
			links[j] = l
		}
		clients = append(clients, &nemesis.ProcessClient{ClientName: name, Pid: p.Pid(), Links: links})
	}

	cpu := s.cpuWindow(ctx, procs, t.running)
	rec, err := check.Create(filepath.Join(s.dir, "nemesis.jsonl"))
	if err != nil {
		return nil, err
	}
	e := &nemesis.Executor{
		Targets:  nemesis.Targets{Clients: clients, Servers: t.servers, Clocks: t.clocks, Cannot: t.cannot, Holder: holders.holder},
		Recorder: rec,
	}
	outcomes, runErr := e.Run(ctx, sched)
	if err := rec.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if runErr != nil {
		// A fault that could not be applied or healed is in the history
		// and the outcomes; the run goes on.
		for _, line := range strings.Split(runErr.Error(), "\n") {
			s.note(errors.New(line))
		}
	}
	if bench.Sleep(ctx, chaosTailLeases*s.env.Lease) != nil {
		return nil, ctx.Err()
	}
	s.cpu = cpu()
	stopClients()
	stopWatch()
	for i, p := range procs {
		if err := p.ExitErr(); err != nil {
			s.note(fmt.Errorf("client c%d: %w", i+1, err))
		}
	}
	return outcomes, s.finalReads()
}

// watchLock starts the contender's watcher of the lock key on servers,
// recording what it reports into the step's server history file until
// the returned stop is called (stop is idempotent). Without a watcher it
// records nothing.
func (s *chaosStep) watchLock(ctx context.Context, servers []bench.Server) (stop func(), err error) {
	watch := s.env.Contender.WatchLock
	if watch == nil {
		return func() {}, nil
	}
	rec, err := check.Create(filepath.Join(s.dir, "server.jsonl"))
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		watch(wctx, servers, s.key, func(c bench.LockChange) { _, _ = rec.Record(serverEvent(c)) })
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			if err := rec.Close(); err != nil {
				s.note(fmt.Errorf("recording the server's view: %w", err))
			}
		})
	}, nil
}

// serverEvent is a watcher's report as a history event, stamped when
// the server made the change where its record tells (At, on the host's
// wall clock, taken back to CLOCK_MONOTONIC by the time since), else
// when it was received.
func serverEvent(c bench.LockChange) check.Event {
	e := check.Event{Process: c.Server, Type: check.Server, F: check.Func(c.Kind), Key: c.Key, Token: c.Token, Rev: c.Revision, Cause: c.Cause}
	if !c.At.IsZero() {
		e.T = check.Now() - check.Mono(time.Since(c.At))
	}
	if c.TTL != nil {
		e.TTLMS = check.Ptr(c.TTL.Milliseconds())
	}
	if c.Err != nil {
		e.Error = c.Err.Error()
	}
	return e
}

// cpuWindow reads the CPU time of the clients and servers now and
// returns the reading of what they spent since, nil when the clients'
// could not be read (a server's that cannot leaves ServerSource empty).
func (s *chaosStep) cpuWindow(ctx context.Context, procs []*holder.Process, servers []bench.Server) func() *results.ChaosCPU {
	clients := func() (time.Duration, error) {
		var sum time.Duration
		for _, p := range procs {
			c, err := host.ProcessCPU(p.Pid())
			if err != nil {
				return 0, err
			}
			sum += c
		}
		return sum, nil
	}
	begin := time.Now()
	c0, cerr := clients()
	s0, src, sok, _ := bench.ServerCPU(ctx, servers)
	return func() *results.ChaosCPU {
		c1, err := clients()
		if cerr != nil || err != nil {
			return nil
		}
		out := &results.ChaosCPU{Seconds: time.Since(begin).Seconds(), ClientsMS: ms(c1 - c0)}
		// A server the schedule killed runs again as a new process (a new
		// container: a new cgroup), whose time counts from its restart.
		if s1, _, ok, _ := bench.ServerCPU(ctx, servers); sok && ok && s1 >= s0 {
			out.ServerMS, out.ServerSource = ms(s1-s0), src
		}
		return out
	}
}

// holderTracker knows which client holds the lock, from the clients'
// "held" and "free" lines, so that client faults strike the holder.
type holderTracker struct {
	mu   sync.Mutex
	seq  int64
	held map[int]int64 // client (1-based) → the sequence number of its "held"
}

// follow returns the line handler of client c.
func (t *holderTracker) follow(c int) func(string) {
	return func(line string) {
		t.mu.Lock()
		defer t.mu.Unlock()
		switch line {
		case "held":
			t.seq++
			t.held[c] = t.seq
		case "free":
			delete(t.held, c)
		}
	}
}

// holder returns the client that believes it holds the lock, the latest
// granted when several do.
func (t *holderTracker) holder() (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	best, at := 0, int64(0)
	for c, seq := range t.held {
		if seq > at {
			best, at = c, seq
		}
	}
	return best, best > 0
}

// finalReads records the harness's reads of each store's counter, once
// every client has stopped.
func (s *chaosStep) finalReads() error {
	rec, err := check.Create(filepath.Join(s.dir, "final.jsonl"))
	if err != nil {
		return err
	}
	final := rec.Client(check.FinalProcess)
	for _, st := range []struct {
		name  string
		store *guardedstore.Store
	}{{check.StoreFenced, s.fenced.Store}, {check.StoreUnfenced, s.unfenced.Store}} {
		inv := final.Invoke(check.ReadCounter, check.Event{Store: st.name})
		v := st.store.Last(s.key + "/counter")
		n := int64(0)
		if v != "" {
			if n, err = strconv.ParseInt(v, 10, 64); err != nil {
				inv.Fail(fmt.Errorf("counter holds %q", v))
				continue
			}
		}
		inv.OK(check.Event{Read: &n})
	}
	return rec.Close()
}

// history merges the step's files into one history.
func (s *chaosStep) history() (*check.History, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, fmt.Errorf("chaos: %w", err)
		}
		files = append(files, f)
	}
	srcs := make([]io.Reader, len(files))
	for i, f := range files {
		srcs[i] = f
	}
	h, err := check.Merge(srcs...)
	if err != nil {
		return nil, fmt.Errorf("chaos: merging the histories: %w", err)
	}
	return h, nil
}
