package locktable

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a Notifier that records what the table told it.
type recorder struct {
	mu       sync.Mutex
	promoted []uint64
	ended    []Reason
}

func (r *recorder) Promoted(token uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.promoted = append(r.promoted, token)
}

func (r *recorder) Ended(reason Reason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, reason)
}

func (r *recorder) state() (promoted []uint64, ended []Reason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.promoted), slices.Clone(r.ended)
}

func newClaim(id uint64, name string, lease time.Duration) (*Claim, *recorder) {
	r := &recorder{}
	return &Claim{Session: id, Name: name, RemoteAddr: fmt.Sprintf("127.0.0.1:%d", 1000+id), Lease: lease, Notifier: r}, r
}

func mustAcquire(t *testing.T, tb *Table, c *Claim, wantGranted bool) uint64 {
	t.Helper()
	tok, granted, err := tb.Acquire(c)
	if err != nil || granted != wantGranted {
		t.Fatalf("Acquire(session %d) = %d, %v, %v; want granted=%v", c.Session, tok, granted, err, wantGranted)
	}
	return tok
}

func TestTokenSequence(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name  string
		last  uint64
		now   time.Time
		check func(got uint64) bool
	}{
		{"fresh starts at the second", 0, base, func(got uint64) bool { return got == uint64(base.Unix())<<20 }},
		{"same second counts up", uint64(base.Unix())<<20 + 5, base, func(got uint64) bool { return got == uint64(base.Unix())<<20+6 }},
		{"next second jumps to it", uint64(base.Unix())<<20 + 5, base.Add(time.Second), func(got uint64) bool { return got == uint64(base.Unix()+1)<<20 }},
		{"clock stepped back still increases", uint64(base.Unix())<<20 + 5, base.Add(-time.Hour), func(got uint64) bool { return got == uint64(base.Unix())<<20+6 }},
		{"restart 2s later is above a full second", uint64(base.Unix())<<20 + 1<<20 - 1, base.Add(2 * time.Second), func(got uint64) bool {
			return got > uint64(base.Unix())<<20+1<<20-1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tokenSequence{last: tt.last}
			if got := s.next(tt.now); !tt.check(got) {
				t.Errorf("next = %d (second %d, counter %d)", got, got>>20, got&(1<<20-1))
			}
		})
	}
}

func TestFIFOAndTokenOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var grants []uint64
		var releases []Reason
		tb := New(Config{
			OnGrant:   func(h Holder, _ time.Duration) { grants = append(grants, h.Token) },
			OnRelease: func(_ Holder, _ time.Duration, r Reason) { releases = append(releases, r) },
		})
		const depth = 10
		owner, _ := newClaim(0, "a", time.Hour)
		last := mustAcquire(t, tb, owner, true)
		var waiters []*Claim
		var recs []*recorder
		for i := range depth {
			c, r := newClaim(uint64(i+1), "a", time.Hour)
			mustAcquire(t, tb, c, false)
			waiters, recs = append(waiters, c), append(recs, r)
		}
		if got := tb.Counts(); got != (Counts{Locks: 1, Held: 1, Waiting: depth}) {
			t.Fatalf("Counts = %+v", got)
		}
		l, ok := tb.Lookup("a")
		if !ok || l.Holder.Session != 0 || len(l.Waiters) != depth {
			t.Fatalf("Lookup = %+v, %v", l, ok)
		}
		for i, w := range l.Waiters {
			if w.Session != uint64(i+1) {
				t.Fatalf("waiter %d is session %d", i, w.Session)
			}
		}
		prev := owner
		for i, c := range waiters {
			time.Sleep(time.Millisecond)
			tb.Release(prev, Graceful)
			for j, r := range recs {
				promoted, _ := r.state()
				if want := j <= i; (len(promoted) == 1) != want {
					t.Fatalf("after release %d: waiter %d promoted=%v", i, j, promoted)
				}
			}
			promoted, _ := recs[i].state()
			if promoted[0] <= last {
				t.Fatalf("token %d after %d: not increasing", promoted[0], last)
			}
			last = promoted[0]
			prev = c
		}
		tb.Release(prev, Graceful)
		if len(grants) != depth+1 || !slices.IsSorted(grants) || len(releases) != depth+1 {
			t.Errorf("grants %v releases %v", grants, releases)
		}
		if n := len(tb.Snapshot(nil)); n != 0 || len(tb.locks) != 0 {
			t.Errorf("idle names are stored: snapshot %d, map %d", n, len(tb.locks))
		}
	})
}

func TestLeaseExpiresExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 500 * time.Millisecond
		tb := New(Config{})
		owner, ro := newClaim(1, "a", lease)
		waiter, rw := newClaim(2, "a", time.Hour)
		mustAcquire(t, tb, owner, true)
		mustAcquire(t, tb, waiter, false)

		time.Sleep(lease - time.Nanosecond)
		synctest.Wait()
		if _, ended := ro.state(); len(ended) != 0 {
			t.Fatalf("owner ended before its lease: %v", ended)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if _, ended := ro.state(); !slices.Equal(ended, []Reason{Expired}) {
			t.Fatalf("owner ended = %v, want [expired]", ended)
		}
		if promoted, _ := rw.state(); len(promoted) != 1 {
			t.Fatalf("waiter not promoted at expiry: %v", promoted)
		}
		if tb.Release(owner, Graceful) {
			t.Error("Release of an expired claim reported it present")
		}
	})
}

func TestTouchSlidesLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 500 * time.Millisecond
		tb := New(Config{})
		c, r := newClaim(1, "a", lease)
		mustAcquire(t, tb, c, true)
		for range 10 {
			time.Sleep(lease - time.Millisecond)
			c.Touch()
		}
		synctest.Wait()
		if _, ended := r.state(); len(ended) != 0 {
			t.Fatalf("touched claim ended: %v", ended)
		}
		time.Sleep(lease - time.Nanosecond)
		synctest.Wait()
		if _, ended := r.state(); len(ended) != 0 {
			t.Fatalf("ended before lease after last touch: %v", ended)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if _, ended := r.state(); !slices.Equal(ended, []Reason{Expired}) {
			t.Fatalf("ended = %v, want [expired] exactly one lease after the last touch", ended)
		}
	})
}

// TestLeasesShareOneTimer holds claims with different leases, entered in
// an order unlike their expiry, some touched and some released, and
// checks that each ends exactly when its own silence reaches its lease:
// the table's one timer serves them in due order.
func TestLeasesShareOneTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		start := time.Now()
		tb := New(Config{})
		type entry struct {
			c       *Claim
			r       *recorder
			touchAt time.Duration // 0: never touched
			release bool
			want    time.Duration // when it must end; 0: never (released)
		}
		var entries []*entry
		add := func(lease, touchAt time.Duration, release bool, want time.Duration) {
			c, r := newClaim(uint64(len(entries)+1), fmt.Sprintf("l%d", len(entries)), lease)
			entries = append(entries, &entry{c: c, r: r, touchAt: touchAt, release: release, want: want})
			mustAcquire(t, tb, c, true)
		}
		add(3000*ms, 0, false, 3000*ms)
		add(1000*ms, 0, false, 1000*ms)
		add(1000*ms, 700*ms, false, 1700*ms)
		add(2000*ms, 0, false, 2000*ms)
		add(500*ms, 0, true, 0)
		add(1500*ms, 1200*ms, false, 2700*ms)
		ended := map[*entry]time.Duration{}
		for at := ms; at <= 4000*ms; at += ms {
			time.Sleep(ms)
			now := time.Since(start)
			for _, e := range entries {
				if e.touchAt == now {
					e.c.Touch()
				}
				if e.release && now == 100*ms {
					tb.Release(e.c, Graceful)
				}
			}
			synctest.Wait()
			for _, e := range entries {
				if _, r := e.r.state(); len(r) > 0 {
					if _, seen := ended[e]; !seen {
						ended[e] = now
					}
				}
			}
		}
		for i, e := range entries {
			got, ok := ended[e]
			switch {
			case e.want == 0 && ok:
				t.Errorf("claim %d (released) ended at %v", i, got)
			case e.want != 0 && got != e.want:
				t.Errorf("claim %d (lease %v) ended at %v, want %v", i, e.c.Lease, got, e.want)
			}
		}
	})
}

func TestSilentWaiterLosesItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := New(Config{})
		owner, _ := newClaim(1, "a", time.Hour)
		silent, rs := newClaim(2, "a", 200*time.Millisecond)
		patient, rp := newClaim(3, "a", time.Hour)
		mustAcquire(t, tb, owner, true)
		mustAcquire(t, tb, silent, false)
		mustAcquire(t, tb, patient, false)
		time.Sleep(time.Second)
		synctest.Wait()
		if _, ended := rs.state(); !slices.Equal(ended, []Reason{Expired}) {
			t.Fatalf("silent waiter ended = %v", ended)
		}
		if l, _ := tb.Lookup("a"); len(l.Waiters) != 1 || l.Waiters[0].Session != 3 {
			t.Fatalf("queue = %+v", l.Waiters)
		}
		tb.Release(owner, Graceful)
		if promoted, _ := rp.state(); len(promoted) != 1 {
			t.Fatal("remaining waiter not promoted")
		}
	})
}

func TestForceReleaseAndKick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var releases []Reason
		tb := New(Config{OnRelease: func(_ Holder, _ time.Duration, r Reason) { releases = append(releases, r) }})
		owner, ro := newClaim(1, "a", time.Hour)
		w1, r1 := newClaim(2, "a", time.Hour)
		w2, r2 := newClaim(3, "a", time.Hour)
		w3, r3 := newClaim(4, "a", time.Hour)
		tok := mustAcquire(t, tb, owner, true)
		for _, c := range []*Claim{w1, w2, w3} {
			mustAcquire(t, tb, c, false)
		}

		if err := tb.Kick("a", w2.RemoteAddr); err != nil {
			t.Fatalf("Kick: %v", err)
		}
		if _, ended := r2.state(); !slices.Equal(ended, []Reason{Force}) {
			t.Errorf("kicked waiter ended = %v", ended)
		}
		got, err := tb.ForceRelease("a")
		if err != nil || got != tok {
			t.Fatalf("ForceRelease = %d, %v; want %d", got, err, tok)
		}
		if _, ended := ro.state(); !slices.Equal(ended, []Reason{Force}) {
			t.Errorf("owner ended = %v", ended)
		}
		if p, _ := r1.state(); len(p) != 1 {
			t.Errorf("head waiter not promoted: %v", p)
		}
		if p, _ := r3.state(); len(p) != 0 {
			t.Errorf("second waiter promoted too: %v", p)
		}
		if !slices.Equal(releases, []Reason{Force}) {
			t.Errorf("releases = %v", releases)
		}

		errs := []struct {
			name string
			err  error
			want error
		}{
			{"force-release idle", func() error { _, err := tb.ForceRelease("idle"); return err }(), ErrNotHeld},
			{"kick on idle lock", tb.Kick("idle", w3.RemoteAddr), ErrNoSuchWaiter},
			{"kick unknown address", tb.Kick("a", "127.0.0.1:1"), ErrNoSuchWaiter},
			{"kick the owner", tb.Kick("a", w1.RemoteAddr), ErrNoSuchWaiter},
		}
		for _, e := range errs {
			if !errors.Is(e.err, e.want) {
				t.Errorf("%s: err = %v, want %v", e.name, e.err, e.want)
			}
		}
	})
}

func TestClosedTableDoesNotPromote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := New(Config{})
		owner, _ := newClaim(1, "a", time.Hour)
		waiter, rw := newClaim(2, "a", time.Hour)
		mustAcquire(t, tb, owner, true)
		mustAcquire(t, tb, waiter, false)
		tb.Close()
		tb.Release(owner, Shutdown)
		if p, _ := rw.state(); len(p) != 0 {
			t.Fatalf("promoted after Close: %v", p)
		}
		late, _ := newClaim(3, "b", time.Hour)
		if _, _, err := tb.Acquire(late); !errors.Is(err, ErrClosed) {
			t.Fatalf("Acquire after Close: %v", err)
		}
		tb.Release(waiter, Shutdown)
		if len(tb.locks) != 0 {
			t.Fatalf("locks left: %d", len(tb.locks))
		}
	})
}

func TestSnapshotMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := New(Config{})
		for i, name := range []string{"b/1", "a/2", "a/1", "c"} {
			c, _ := newClaim(uint64(i), name, time.Hour)
			mustAcquire(t, tb, c, true)
		}
		var names []string
		for _, l := range tb.Snapshot(func(n string) bool { return n[0] == 'a' }) {
			names = append(names, l.Name)
		}
		if !slices.Equal(names, []string{"a/1", "a/2"}) {
			t.Errorf("Snapshot = %v", names)
		}
		if n := len(tb.Snapshot(nil)); n != 4 {
			t.Errorf("Snapshot(nil) has %d locks", n)
		}
		if _, ok := tb.Lookup("zzz"); ok {
			t.Error("Lookup of an idle name succeeded")
		}
	})
}
