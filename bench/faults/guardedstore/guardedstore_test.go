package guardedstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/check"
)

func tok(t uint64) *uint64 { return &t }

func TestStoreFencing(t *testing.T) {
	s := NewStore(true)
	steps := []struct {
		w      Write
		ok     bool
		reason string
		high   uint64
	}{
		{Write{Client: "A", Lock: "L", Token: tok(5)}, true, "", 5},
		{Write{Client: "A", Lock: "L", Token: tok(5)}, true, "", 5}, // same grant again
		{Write{Client: "B", Lock: "L", Token: tok(7)}, true, "", 7},
		{Write{Client: "A", Lock: "L", Token: tok(5)}, false, ReasonStale, 7},
		{Write{Client: "A", Lock: "L"}, false, ReasonNoToken, 7},
		{Write{Client: "C", Lock: "M", Token: tok(1)}, true, "", 1}, // per lock
	}
	for i, st := range steps {
		e := s.Apply(st.w)
		if e.Accepted != st.ok || e.Reason != st.reason || e.Highest != st.high || e.Seq != int64(i+1) {
			t.Errorf("step %d: got accepted=%v reason=%q highest=%d seq=%d, want %v %q %d %d",
				i, e.Accepted, e.Reason, e.Highest, e.Seq, st.ok, st.reason, st.high, i+1)
		}
	}
	h := s.History()
	for i := 1; i < len(h); i++ {
		if h[i].At < h[i-1].At {
			t.Errorf("history timestamps go back at %d: %d < %d", i, h[i].At, h[i-1].At)
		}
	}

	u := NewStore(false)
	u.Apply(Write{Client: "B", Lock: "L", Token: tok(7)})
	if e := u.Apply(Write{Client: "A", Lock: "L", Token: tok(5)}); !e.Accepted {
		t.Errorf("unfenced store rejected a write: %+v", e)
	}
	if e := u.Apply(Write{Client: "A", Lock: "L"}); !e.Accepted {
		t.Errorf("unfenced store rejected a write without token: %+v", e)
	}
}

// TestAnalyzeHandMade checks every count on a small history whose answer
// is worked out by hand in the comments.
func TestAnalyzeHandMade(t *testing.T) {
	grants := []Grant{
		// L1: A is granted and never learns it lost the lock (a pause),
		// B is granted at 20 while A still believes it holds L1 (a double
		// grant), then A is granted again at 50 after B ended at 40.
		{Client: "A", Lock: "L1", At: 10},
		{Client: "B", Lock: "L1", At: 20, End: 40},
		{Client: "A", Lock: "L1", At: 50, End: 60},
		// L2: C holds until 15, D is granted at 16 (not a double grant).
		{Client: "D", Lock: "L2", At: 16},
		{Client: "C", Lock: "L2", At: 5, End: 15},
	}
	accepted := func(client, lock string, at check.Mono) Entry {
		return Entry{Write: Write{Client: client, Lock: lock}, At: at, Accepted: true}
	}
	history := []Entry{
		accepted("E", "L2", 3),  // ungranted: E never had L2
		accepted("A", "L1", 12), // safe
		accepted("C", "L2", 13), // safe
		accepted("C", "L2", 17), // unsafe #1: D was granted at 16
		accepted("D", "L2", 18), // safe
		accepted("B", "L1", 22), // safe
		accepted("A", "L1", 25), // unsafe #2: B was granted at 20
		{Write: Write{Client: "A", Lock: "L1"}, At: 26, Reason: ReasonStale}, // would be unsafe: prevented
		accepted("B", "L1", 30), // safe
		accepted("A", "L1", 35), // unsafe #3
		accepted("A", "L1", 55), // safe: A's own new grant at 50
		{Write: Write{Client: "B", Lock: "L1"}, At: 56, Reason: ReasonNoToken}, // B's grant ended; rejected
	}
	a := Analyze(history, grants)

	if a.Writes != 12 || a.Accepted != 10 || a.Rejected != 2 {
		t.Errorf("writes/accepted/rejected = %d/%d/%d, want 12/10/2", a.Writes, a.Accepted, a.Rejected)
	}
	if a.RejectedByFencing != 1 || a.RejectedNoToken != 1 {
		t.Errorf("rejected by fencing/no token = %d/%d, want 1/1", a.RejectedByFencing, a.RejectedNoToken)
	}
	var got []string
	for _, u := range a.Unsafe {
		got = append(got, fmt.Sprintf("%s@%d after %s@%d", u.Entry.Client, u.Entry.At, u.Later.Client, u.Later.At))
	}
	want := []string{"C@17 after D@16", "A@25 after B@20", "A@35 after B@20"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unsafe writes = %v, want %v", got, want)
	}
	// B's write at 56 is under B's grant at 20, and A's grant at 50
	// came later: it would have been unsafe too.
	if a.Prevented != 2 {
		t.Errorf("prevented = %d, want 2", a.Prevented)
	}
	if a.Ungranted != 1 {
		t.Errorf("ungranted = %d, want 1", a.Ungranted)
	}
	// A's first grant wrote over [12, 35], B's over [22, 30]: one overlap.
	// A's second grant [55] and the L2 intervals C [13, 17], D [18] and
	// E [3] do not intersect another client's.
	if len(a.Overlaps) != 1 {
		t.Fatalf("overlaps = %+v, want one", a.Overlaps)
	}
	o := a.Overlaps[0]
	if o.First.Client != "A" || o.First.From != 12 || o.First.To != 35 || o.First.Writes != 3 ||
		o.Second.Client != "B" || o.Second.From != 22 || o.Second.To != 30 {
		t.Errorf("overlap = %+v", o)
	}
	if len(a.DoubleGrants) != 1 || a.DoubleGrants[0].Held.Client != "A" || a.DoubleGrants[0].Second.At != 20 {
		t.Errorf("double grants = %+v, want B@20 while A held", a.DoubleGrants)
	}
}

func TestAnalyzeWithoutGrants(t *testing.T) {
	h := []Entry{
		{Write: Write{Client: "A", Lock: "L"}, At: 1, Accepted: true},
		{Write: Write{Client: "B", Lock: "L"}, At: 2, Accepted: true},
		{Write: Write{Client: "A", Lock: "L"}, At: 3, Accepted: true},
	}
	a := Analyze(h, nil)
	if len(a.Unsafe) != 0 || a.Ungranted != 0 || len(a.Overlaps) != 1 {
		t.Errorf("analysis without grants = %+v, want one overlap only", a)
	}
}

// TestServerEndToEnd runs the Kleppmann sequence through the real server
// over sockets, once fenced and once unfenced, with grants timed by the
// clients on the shared monotonic clock.
func TestServerEndToEnd(t *testing.T) {
	for _, fenced := range []bool{true, false} {
		t.Run(fmt.Sprintf("fenced=%v", fenced), func(t *testing.T) {
			srv, err := Listen("", fenced)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a, b := NewClient(srv.Addr()), NewClient(srv.Addr())
			defer a.Close()
			defer b.Close()

			write := func(c *Client, w Write) Entry {
				t.Helper()
				e, err := c.Write(ctx, w)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			gA := Grant{Client: "A", Lock: "k", Token: tok(1), At: check.Now()}
			write(a, Write{Client: "A", Lock: "k", Token: tok(1), Payload: "a1"})
			// A pauses here; its lease expires and B is granted.
			gB := Grant{Client: "B", Lock: "k", Token: tok(2), At: check.Now()}
			write(b, Write{Client: "B", Lock: "k", Token: tok(2), Payload: "b1"})
			// A resumes and writes at once, still believing it holds k.
			late := write(a, Write{Client: "A", Lock: "k", Token: tok(1), Payload: "a2"})
			if late.Accepted == fenced {
				t.Errorf("A's late write: accepted=%v in a fenced=%v store", late.Accepted, fenced)
			}

			hist, err := a.History(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 3 || hist[1].Payload != "b1" || *hist[2].Token != 1 {
				t.Fatalf("history over HTTP = %+v", hist)
			}
			an := Analyze(hist, []Grant{gA, gB})
			wantUnsafe, wantPrevented := 1, 0
			if fenced {
				wantUnsafe, wantPrevented = 0, 1
			}
			if len(an.Unsafe) != wantUnsafe || an.Prevented != wantPrevented || len(an.DoubleGrants) != 1 {
				t.Errorf("analysis = %+v, want %d unsafe, %d prevented, 1 double grant", an, wantUnsafe, wantPrevented)
			}
		})
	}
}

func TestServerConcurrentAndBadRequests(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", true)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := NewClient(srv.Addr())
	defer c.Close()

	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := c.Write(ctx, Write{Client: fmt.Sprint(i % 3), Lock: "k", Token: tok(uint64(i))}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	h := srv.Store.History()
	if len(h) != n {
		t.Fatalf("history has %d entries, want %d", len(h), n)
	}
	// Fencing is decided one write at a time: the accepted tokens, in
	// decision order, never decrease.
	var high uint64
	for _, e := range h {
		if e.Accepted {
			if *e.Token < high {
				t.Errorf("accepted token %d after %d", *e.Token, high)
			}
			high = *e.Token
		}
	}

	if _, err := c.Write(ctx, Write{Lock: "k"}); err == nil {
		t.Error("a write without a client was accepted")
	}
}

// TestReadFencing: reads return the last accepted value per name, and a
// fenced store raises a name's mark with a read's token, so that the new
// holder's read fences the old holder's later write out (the race that
// fencing writes alone lets through).
func TestReadFencing(t *testing.T) {
	s := NewStore(true)
	type step struct {
		read     *Read
		write    *Write
		ok       bool
		value    string
		reason   string
		highest  uint64
		describe string
	}
	steps := []step{
		{read: &Read{Client: "A", Lock: "r", Token: tok(5)}, ok: true, value: "", highest: 5, describe: "A reads the empty register"},
		{write: &Write{Client: "A", Lock: "r", Token: tok(5), Payload: "a"}, ok: true, highest: 5, describe: "A writes"},
		{read: &Read{Client: "B", Lock: "r", Token: tok(7)}, ok: true, value: "a", highest: 7, describe: "B, newer, reads A's value and raises the mark"},
		{write: &Write{Client: "A", Lock: "r", Token: tok(5), Payload: "a2"}, ok: false, reason: ReasonStale, highest: 7, describe: "A's late write: fenced out by B's read"},
		{read: &Read{Client: "A", Lock: "r", Token: tok(5)}, ok: false, reason: ReasonStale, highest: 7, describe: "A's late read"},
		{read: &Read{Client: "C", Lock: "r"}, ok: false, reason: ReasonNoToken, highest: 7, describe: "no token"},
		{read: &Read{Client: "B", Lock: "other", Token: tok(1)}, ok: true, value: "", highest: 1, describe: "marks are per name"},
	}
	for _, st := range steps {
		if st.read != nil {
			r := s.Read(*st.read)
			if r.Accepted != st.ok || r.Value != st.value || r.Reason != st.reason || r.Highest != st.highest || r.At == 0 {
				t.Errorf("%s: got %+v, want accepted=%v value=%q reason=%q highest=%d", st.describe, r, st.ok, st.value, st.reason, st.highest)
			}
			continue
		}
		e := s.Apply(*st.write)
		if e.Accepted != st.ok || e.Reason != st.reason || e.Highest != st.highest {
			t.Errorf("%s: got %+v, want accepted=%v reason=%q highest=%d", st.describe, e, st.ok, st.reason, st.highest)
		}
	}
	if got := s.Last("r"); got != "a" {
		t.Errorf("Last = %q, want the last accepted value a", got)
	}
	if len(s.History()) != 2 {
		t.Errorf("history has %d entries, want the 2 writes (reads are not kept)", len(s.History()))
	}

	u := NewStore(false)
	u.Apply(Write{Client: "B", Lock: "r", Token: tok(7), Payload: "b"})
	u.Apply(Write{Client: "A", Lock: "r", Token: tok(5), Payload: "a"})
	for _, r := range []Read{{Client: "A", Lock: "r", Token: tok(1)}, {Client: "C", Lock: "r"}} {
		if got := u.Read(r); !got.Accepted || got.Value != "a" {
			t.Errorf("unfenced read %+v = %+v, want the last write a", r, got)
		}
	}
}

func TestServerRead(t *testing.T) {
	srv, err := Listen("", true)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := NewClient(srv.Addr())
	defer c.Close()
	if _, err := c.Write(ctx, Write{Client: "A", Lock: "k/register", Token: tok(3), Payload: "A-1"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Read(ctx, Read{Client: "B", Lock: "k/register", Token: tok(4)})
	if err != nil || !r.Accepted || r.Value != "A-1" || r.Highest != 4 {
		t.Fatalf("read = %+v, %v; want A-1 with the mark raised to 4", r, err)
	}
	if r, err := c.Read(ctx, Read{Client: "A", Lock: "k/register", Token: tok(3)}); err != nil || r.Accepted || r.Reason != ReasonStale {
		t.Errorf("stale read = %+v, %v; want rejected as stale", r, err)
	}
	if _, err := c.Read(ctx, Read{Lock: "k/register"}); !errors.Is(err, ErrRefused) {
		t.Errorf("a read without a client: %v, want ErrRefused", err)
	}
}
