package holder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// TestChaosClients runs three chaos client processes on one monolock lock
// and real guarded stores, freezes one past the lease, stops them all and
// checks their merged history: well-formed, every client granted and
// working under the lock, lost notices only before a release, and what
// fencing guarantees with fenced reads: the fenced counter loses nothing
// and the fenced register is linearizable.
func TestChaosClients(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for seconds")
	}
	srv := monolocktest.NewServer(t)
	fenced, err := guardedstore.Listen("", true)
	if err != nil {
		t.Fatal(err)
	}
	defer fenced.Close()
	unfenced, err := guardedstore.Listen("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer unfenced.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const lease = 400 * time.Millisecond
	dir := t.TempDir()
	var procs []*Process
	var files []string
	var mu sync.Mutex
	said := map[string][]string{} // what each client said on its stdout
	for i := range 3 {
		name := fmt.Sprintf("c%d", i+1)
		files = append(files, filepath.Join(dir, name+".jsonl"))
		p, err := StartChaos(ctx, command(t), ChaosSpec{
			Contender: "monolock", Addrs: []string{srv.Addr}, Lease: lease, Key: "chaos",
			Client: name, History: files[i], Fenced: fenced.Addr(), Unfenced: unfenced.Addr(), Seed: uint64(i + 1),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		procs = append(procs, p)
		p.Follow(func(line string) {
			mu.Lock()
			defer mu.Unlock()
			said[name] = append(said[name], line)
		})
	}
	time.Sleep(4 * lease)
	if err := syscall.Kill(procs[0].Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * lease / 2)
	if err := syscall.Kill(procs[0].Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * lease)
	for _, p := range procs {
		p.Close() // EOF: release and exit
		if err := p.ExitErr(); err != nil {
			t.Errorf("chaos client: %v", err)
		}
	}

	var srcs []*os.File
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		srcs = append(srcs, r)
	}
	h, err := check.Merge(srcs[0], srcs[1], srcs[2])
	if err != nil {
		t.Fatalf("merged history: %v", err)
	}
	granted := map[string]int{}
	writes := map[string]int{}
	increments := 0
	lastLifecycle := map[string]check.Event{} // the latest acquire ok or release invoke
	for _, e := range h.Events {
		switch {
		case e.F == check.Acquire && e.Type == check.OK:
			granted[e.Process]++
			if e.Token == nil {
				t.Errorf("%s granted without a token", e.Process)
			}
			lastLifecycle[e.Process] = e
		case e.F == check.Release && e.Type == check.Invoke:
			lastLifecycle[e.Process] = e
		case e.F == check.Write && e.Type == check.Invoke:
			writes[e.Store]++
		case e.F == check.Increment && e.Type == check.OK:
			increments++
			if e.WriteT == nil {
				t.Errorf("%s's increment id %d completed without the time its write left", e.Process, e.ID)
			}
		case e.Type == check.Notice:
			if last := lastLifecycle[e.Process]; last.F != check.Acquire {
				t.Errorf("%s's lost notice at %d after its release invoke, not under a grant", e.Process, e.T)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 3 {
		name := fmt.Sprintf("c%d", i+1)
		if granted[name] == 0 {
			t.Errorf("%s was never granted", name)
		}
		// It said "held" at each grant and "free" after each, in turn.
		lines := said[name]
		for j, l := range lines {
			if want := []string{lineHeld, lineFree}[j%2]; l != want {
				t.Errorf("%s's line %d is %q, want %q (lines %q)", name, j, l, want, lines)
				break
			}
		}
		if len(lines) != 2*granted[name] {
			t.Errorf("%s said %d lines for %d grants", name, len(lines), granted[name])
		}
	}
	if writes[check.StoreFenced] == 0 || writes[check.StoreUnfenced] == 0 || increments == 0 {
		t.Errorf("register writes per store: %v, increments completed: %d; want some of each", writes, increments)
	}
	// Every client's last operation was completed: it released and
	// exited on EOF.
	for _, op := range h.Ops {
		if op.Done == nil {
			t.Errorf("%s's %s id %d never completed", op.Invoke.Process, op.Invoke.F, op.Invoke.ID)
		}
	}

	// The harness's final reads, as the scenario makes them.
	var events []check.Event
	events = append(events, h.Events...)
	for _, st := range []struct {
		name  string
		store *guardedstore.Store
	}{{check.StoreFenced, fenced.Store}, {check.StoreUnfenced, unfenced.Store}} {
		n, _ := strconv.ParseInt(st.store.Last("chaos/counter"), 10, 64)
		at := check.Now()
		events = append(events,
			check.Event{T: at, Process: check.FinalProcess, Type: check.Invoke, F: check.ReadCounter, ID: int64(len(events) + 1), Store: st.name},
			check.Event{T: at + 1, Process: check.FinalProcess, Type: check.OK, F: check.ReadCounter, ID: int64(len(events) + 1), Store: st.name, Read: &n})
	}
	h, err = check.NewHistory(events)
	if err != nil {
		t.Fatal(err)
	}
	v := check.Check(h, check.Options{Name: "monolock"})
	for _, s := range v.Stores {
		t.Logf("%s: valid %s, linearizable %s (%d ops), stale accepted %d rejected %d, acknowledged %d final %v lost %d",
			s.Store, s.Valid, s.Linearizability.Valid, s.Linearizability.Operations, s.StaleWrites.Count, s.StaleWrites.Rejected,
			s.LostUpdates.Acknowledged, *s.LostUpdates.Final, s.LostUpdates.Lost)
		if s.Linearizability.Valid != check.Valid {
			t.Errorf("%s register: %s (%s)", s.Store, s.Linearizability.Valid, s.Linearizability.Reason)
		}
		if s.Store == check.StoreFenced && s.LostUpdates.Valid != check.Valid {
			t.Errorf("fenced counter: %s, %d lost: %+v", s.LostUpdates.Valid, s.LostUpdates.Lost, s.LostUpdates.First)
		}
	}
	t.Logf("operations %d, holds %d, double holders %d", v.Operations, v.Exclusion.Holds, v.Exclusion.Count)
}

// TestStartChaosFails: a chaos client that cannot start says why at once.
func TestStartChaosFails(t *testing.T) {
	srv := monolocktest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spec := ChaosSpec{Contender: "monolock", Addrs: []string{srv.Addr}, Lease: time.Second, Key: "k",
		Client: "c1", History: filepath.Join(t.TempDir(), "no-such-dir", "c1.jsonl"), Fenced: "127.0.0.1:1", Unfenced: "127.0.0.1:1"}
	if p, err := StartChaos(ctx, command(t), spec); err == nil || !strings.Contains(err.Error(), "no such file") {
		if p != nil {
			p.Close()
		}
		t.Errorf("StartChaos with an unwritable history: %v, want the file error", err)
	}
	spec.Client = ""
	if _, err := StartChaos(ctx, command(t), spec); err == nil {
		t.Error("StartChaos without a client name succeeded")
	}
}

// TestFollowSeesEveryLine: a child that talks as it exits on Close's EOF
// has every line handed to its follower, the last one before Close
// returns; Close does not take lines from the follower.
func TestFollowSeesEveryLine(t *testing.T) {
	const n = 2000
	sh := Command{Path: "/bin/sh", Args: []string{"-c", fmt.Sprintf("echo ready; cat >/dev/null; seq 1 %d", n), "sh"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, first, err := start(ctx, sh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first != "ready" {
		t.Fatalf("first line %q, want ready", first)
	}
	var mu sync.Mutex
	var got []string
	p.Follow(func(line string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, line)
	})
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n || got[n-1] != strconv.Itoa(n) {
		t.Errorf("follower had %d lines (last %q), want %d ending in %d", len(got), got[len(got)-1:], n, n)
	}
}
