package sessions_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	monolockclient "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// eventually polls cond until it holds or 10 s pass: the server sees a
// closed connection a little after the client closed it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: not %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newServer(t *testing.T) (*monolocktest.Server, *monolock.Locker) {
	t.Helper()
	srv := monolocktest.NewServer(t)
	l := monolock.New(monolockclient.Config{Address: srv.Addr}, 30*time.Second)
	return srv, l
}

func serverEmpty(srv *monolocktest.Server) func() bool {
	return func() bool {
		st := srv.Server().Stats()
		return st.Connections == 0 && st.LocksHeld == 0 && st.Waiters == 0
	}
}

func TestOpenHolders(t *testing.T) {
	srv, l := newServer(t)
	var mu sync.Mutex
	var progress []sessions.Progress
	set, err := sessions.Open(context.Background(), sessions.Config{
		Locker: l, Sessions: 200, Concurrency: 16,
		Progress: func(p sessions.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := srv.Server().Stats(); st.LocksHeld != 200 || st.Waiters != 0 {
		t.Fatalf("server after Open: %+v, want 200 held", st)
	}
	if h, w, e := set.Counts(); h != 200 || w != 0 || e != 0 {
		t.Fatalf("Counts = %d held %d waiting %d ended", h, w, e)
	}
	keys := map[string]bool{}
	for _, s := range set.Sessions() {
		keys[s.Key] = true
		if s.Held() == nil || s.GrantedAt().IsZero() || s.Err() != nil {
			t.Fatalf("session %d: held %v granted %v err %v", s.Index, s.Held(), s.GrantedAt(), s.Err())
		}
	}
	if len(keys) != 200 || !keys["scale-0"] || !keys["scale-199"] {
		t.Fatalf("%d distinct keys, want scale-0..scale-199", len(keys))
	}
	mu.Lock()
	last := progress[len(progress)-1]
	mu.Unlock()
	if len(progress) < 2 || last.Held != 200 || last.Started != 200 || last.Total != 200 {
		t.Fatalf("progress %+v", progress)
	}
	if err := set.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an empty server after Close", serverEmpty(srv))
}

func TestOpenWaitersQueuedInOrder(t *testing.T) {
	srv, l := newServer(t)
	queued := func(context.Context) (int, error) { return srv.Server().Stats().Waiters, nil }
	// Concurrency 1 with Queued: each waiter queues before the next
	// starts, so every key's queue is in index order.
	set, err := sessions.Open(context.Background(), sessions.Config{Locker: l, Sessions: 40, Keys: 4, Concurrency: 1, Queued: queued})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	if st := srv.Server().Stats(); st.LocksHeld != 4 || st.Waiters != 36 {
		t.Fatalf("server after Open: %+v, want 4 held and 36 waiting", st)
	}
	if h, w, _ := set.Counts(); h != 4 || w != 36 {
		t.Fatalf("Counts = %d held, %d waiting", h, w)
	}
	ss := set.Sessions()
	if ss[4].Key != ss[0].Key || ss[5].Key != "scale-1" {
		t.Fatalf("keys %s %s %s", ss[0].Key, ss[4].Key, ss[5].Key)
	}
	// Releasing the head of key 0 promotes session 4, the next in line.
	released := time.Now()
	if err := ss[0].Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ss[4].Done():
	case <-time.After(10 * time.Second):
		t.Fatal("session 4 not promoted after its head released")
	}
	if ss[4].Held() == nil || ss[4].GrantedAt().Before(released) {
		t.Fatalf("session 4: held %v granted %v", ss[4].Held(), ss[4].GrantedAt())
	}
	if ss[8].Held() != nil {
		t.Fatal("session 8 granted out of order")
	}
	if err := set.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an empty server after Close", serverEmpty(srv))
}

func TestOpenWaitersWithoutQueued(t *testing.T) {
	srv, l := newServer(t)
	set, err := sessions.Open(context.Background(), sessions.Config{Locker: l, Sessions: 30, Keys: 1, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "29 waiters on the server", func() bool { return srv.Server().Stats().Waiters == 29 })
	if err := set.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an empty server after Close", serverEmpty(srv))
}

func TestOpenRamp(t *testing.T) {
	_, l := newServer(t)
	begin := time.Now()
	set, err := sessions.Open(context.Background(), sessions.Config{Locker: l, Sessions: 20, Ramp: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close(context.Background())
	// Session i starts no earlier than i/20 of the ramp: lower bounds only.
	if set.OpenTime() < 285*time.Millisecond {
		t.Fatalf("OpenTime %v with a 300ms ramp", set.OpenTime())
	}
	for _, i := range []int{10, 19} {
		want := 300 * time.Millisecond * time.Duration(i) / 20
		if got := set.Sessions()[i].GrantedAt().Sub(begin); got < want {
			t.Errorf("session %d granted %v after Open began, want ≥ %v", i, got, want)
		}
	}
}

func TestOpenFailsClearlyAndCleansUp(t *testing.T) {
	srv, l := newServer(t)
	// A server that refuses further connections: close its listener
	// after 10 holders by pointing later sessions at a dead address.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	bad := monolock.New(monolockclient.Config{Address: deadAddr}, 30*time.Second)
	for _, tc := range []struct {
		name string
		keys int
		want string
	}{
		{"holder", 50, "session 10 (scale-10) of 50"},
		{"waiter", 5, "session 10 (scale-0) of 50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mixed := &switchLocker{good: l, bad: bad, after: 10}
			_, err = sessions.Open(context.Background(), sessions.Config{Locker: mixed, Sessions: 50, Keys: tc.keys, Concurrency: 1})
			if err == nil {
				t.Fatal("Open succeeded against a dead address")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("error does not name the session (%s) and the cause: %v", tc.want, err)
			}
			eventually(t, "an empty server after a failed Open", serverEmpty(srv))
		})
	}
}

func TestOpenContextEnds(t *testing.T) {
	srv, l := newServer(t)
	never := func(context.Context) (int, error) { return 0, nil }         // no waiter ever counts as queued
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // ample for 2 holders
	defer cancel()
	_, err := sessions.Open(ctx, sessions.Config{Locker: l, Sessions: 20, Keys: 2, Concurrency: 3, Queued: never})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiters") {
		t.Fatalf("err = %v, want a deadline while opening waiters", err)
	}
	eventually(t, "an empty server after a cancelled Open", serverEmpty(srv))
}

func TestConfigErrors(t *testing.T) {
	_, l := newServer(t)
	for _, tc := range []struct {
		cfg  sessions.Config
		want string
	}{
		{sessions.Config{Sessions: 1}, "Locker is nil"},
		{sessions.Config{Locker: l}, "Sessions = 0"},
		{sessions.Config{Locker: l, Sessions: 5, Keys: 6}, "Keys = 6"},
		{sessions.Config{Locker: l, Sessions: 5, Keys: -1}, "Keys = -1"},
	} {
		if _, err := sessions.Open(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// switchLocker opens the first after sessions with good, the rest with bad.
type switchLocker struct {
	good, bad bench.Locker
	after     int
	mu        sync.Mutex
	n         int
}

func (s *switchLocker) Acquire(ctx context.Context, key string) (bench.Held, error) {
	s.mu.Lock()
	s.n++
	l := s.good
	if s.n > s.after {
		l = s.bad
	}
	s.mu.Unlock()
	return l.Acquire(ctx, key)
}

func (s *switchLocker) Close() error { return nil }
