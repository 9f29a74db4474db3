package check

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLinearizableUnfenced(t *testing.T) {
	const s = StoreUnfenced
	tests := []struct {
		name  string
		build func(b *builder)
		want  Validity
	}{
		{"sequential", func(b *builder) {
			b.read("c1", s, 1, 2, "")
			b.write("c1", s, "a", 0, 3, 4, OK, true)
			b.read("c2", s, 5, 6, "a")
			b.write("c2", s, "b", 0, 7, 8, OK, true)
			b.read("c1", s, 9, 10, "b")
		}, Valid},
		{"concurrent read sees the new value", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c1", s, "b", 0, 3, 10, OK, true)
			b.read("c2", s, 4, 5, "b") // b linearized at 4
			b.read("c3", s, 6, 7, "b")
		}, Valid},
		{"concurrent read sees the old value", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c1", s, "b", 0, 3, 10, OK, true)
			b.read("c2", s, 4, 5, "a")
		}, Valid},
		{"stale read", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c2", s, "b", 0, 3, 4, OK, true)
			b.read("c3", s, 5, 6, "a") // b completed before the read began
		}, Invalid},
		{"new value then old value", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c1", s, "b", 0, 3, 20, OK, true)
			b.read("c2", s, 4, 5, "b")
			b.read("c3", s, 6, 7, "a") // once b is seen, a is gone
		}, Invalid},
		{"pending write takes effect late", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c2", s, "b", 0, 3, 0, "", false) // paused, never completed
			b.read("c3", s, 10, 11, "a")
			b.read("c3", s, 40, 41, "b")
		}, Valid},
		{"pending write cannot be undone", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c2", s, "b", 0, 3, 0, "", false)
			b.read("c3", s, 10, 11, "b")
			b.read("c3", s, 12, 13, "a")
		}, Invalid},
		{"write of unknown outcome may never happen", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c2", s, "b", 0, 3, 4, Info, false)
			b.read("c3", s, 10, 11, "a")
		}, Valid},
		{"failed write has no effect", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, true)
			b.write("c2", s, "b", 0, 3, 4, Fail, false)
			b.read("c3", s, 10, 11, "b")
		}, Invalid},
		{"unfenced store rejected a write", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, false)
		}, Invalid},
		{"empty", func(*builder) {}, Valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			l := CheckLinearizable(b.history(t), s, LinearizabilityOptions{})
			if l.Valid != tt.want {
				t.Fatalf("verdict %s, want %s (%+v)", l.Valid, tt.want, l)
			}
			if tt.want == Invalid && (l.First == nil || len(l.First.Excerpt) == 0) {
				t.Errorf("invalid without a first violation and its excerpt: %+v", l)
			}
		})
	}
}

func TestLinearizableFenced(t *testing.T) {
	const s = StoreFenced
	tests := []struct {
		name  string
		build func(b *builder)
		want  Validity
	}{
		{"newer token wins, stale rejected", func(b *builder) {
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.write("c2", s, "b", 7, 3, 4, OK, true)
			b.write("c1", s, "a2", 5, 5, 6, OK, false) // stale: rejected
			b.read("c3", s, 7, 8, "b")
		}, Valid},
		{"same grant writes twice", func(b *builder) {
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.write("c1", s, "a2", 5, 3, 4, OK, true)
			b.read("c1", s, 5, 6, "a2")
		}, Valid},
		{"no token is rejected", func(b *builder) {
			b.write("c1", s, "a", 0, 1, 2, OK, false)
			b.read("c1", s, 3, 4, "")
		}, Valid},
		{"stale token accepted", func(b *builder) {
			b.write("c2", s, "b", 7, 1, 2, OK, true)
			b.write("c1", s, "a", 5, 3, 4, OK, true)
		}, Invalid},
		{"fresh token rejected", func(b *builder) {
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.write("c2", s, "b", 7, 3, 4, OK, false)
		}, Invalid},
		{"rejected write read back", func(b *builder) {
			b.write("c2", s, "b", 7, 1, 2, OK, true)
			b.write("c1", s, "a", 5, 3, 4, OK, false)
			b.read("c3", s, 5, 6, "a")
		}, Invalid},
		{"concurrent writes decide by token, not by time", func(b *builder) {
			// Both in flight at once; the store saw 7 first, so 5 was
			// rejected although it was invoked later.
			b.write("c2", s, "b", 7, 1, 10, OK, true)
			b.write("c1", s, "a", 5, 2, 9, OK, false)
			b.read("c3", s, 11, 12, "b")
		}, Valid},
		{"pending stale write stays rejected", func(b *builder) {
			b.write("c2", s, "b", 7, 1, 2, OK, true)
			b.write("c1", s, "a", 5, 3, 0, "", false)
			b.read("c3", s, 10, 11, "a")
		}, Invalid},
		// Fenced reads: a read with a token raises the mark.
		{"new holder's read fences the old holder's write out", func(b *builder) {
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.tokenRead("c2", s, 7, 3, 4, OK, "a")
			b.write("c1", s, "a2", 5, 5, 6, OK, false)
			b.write("c2", s, "b", 7, 7, 8, OK, true)
		}, Valid},
		{"a write accepted below a read's token", func(b *builder) {
			b.tokenRead("c2", s, 7, 1, 2, OK, "")
			b.write("c1", s, "a", 5, 3, 4, OK, true)
		}, Invalid},
		{"a read answered below the mark", func(b *builder) {
			b.write("c2", s, "b", 7, 1, 2, OK, true)
			b.tokenRead("c1", s, 5, 3, 4, OK, "b")
		}, Invalid},
		{"a rejected read had no effect", func(b *builder) {
			b.write("c2", s, "b", 7, 1, 2, OK, true)
			b.tokenRead("c1", s, 5, 3, 4, Fail, "")
			b.read("c3", s, 5, 6, "b")
		}, Valid},
		{"an unknown read may have raised the mark", func(b *builder) {
			// Without c2's read taking effect, c1's write with 6 would
			// have been accepted.
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.tokenRead("c2", s, 7, 3, 0, Info, "")
			b.write("c1", s, "a2", 6, 5, 6, OK, false)
		}, Valid},
		{"an unknown read cannot explain a rejection before its invocation", func(b *builder) {
			b.write("c1", s, "a", 5, 1, 2, OK, true)
			b.write("c1", s, "a2", 6, 3, 4, OK, false)
			b.tokenRead("c2", s, 7, 5, 6, Info, "")
		}, Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			l := CheckLinearizable(b.history(t), s, LinearizabilityOptions{Fenced: true})
			if l.Valid != tt.want {
				t.Fatalf("verdict %s, want %s (%+v)", l.Valid, tt.want, l)
			}
		})
	}
}

func TestLinearizableVisualization(t *testing.T) {
	b := newBuilder()
	b.write("c1", StoreUnfenced, "a", 0, 1, 2, OK, true)
	b.write("c2", StoreUnfenced, "b", 0, 3, 4, OK, true)
	b.read("c3", StoreUnfenced, 5, 6, "a")
	path := filepath.Join(t.TempDir(), "viz", "redis-unfenced.html")
	l := CheckLinearizable(b.history(t), StoreUnfenced, LinearizabilityOptions{Visualization: path})
	if l.Valid != Invalid || l.Visualization != path {
		t.Fatalf("got %s with visualisation %q (%s), want invalid at %s", l.Valid, l.Visualization, l.Reason, path)
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "<html") || !strings.Contains(string(html), `c3#1 read() → \"a\"`) {
		t.Errorf("visualisation lacks the HTML page or the described read (%d bytes)", len(html))
	}
	if l.First == nil || !strings.Contains(l.First.What, `c3#1 read() → "a"`) {
		t.Errorf("first violation = %+v, want the stale read", l.First)
	}

	// A valid history writes nothing.
	ok := newBuilder()
	ok.write("c1", StoreUnfenced, "a", 0, 1, 2, OK, true)
	other := filepath.Join(t.TempDir(), "none.html")
	if l := CheckLinearizable(ok.history(t), StoreUnfenced, LinearizabilityOptions{Visualization: other}); l.Valid != Valid || l.Visualization != "" {
		t.Errorf("valid history: %+v", l)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a valid history left a visualisation (stat: %v)", err)
	}
}

// TestLinearizableTimeout gives porcupine a history whose search space is
// far too large (40 concurrent writes and a read of a value never
// written) and a short bound: the verdict must be unknown, not valid.
func TestLinearizableTimeout(t *testing.T) {
	b := newBuilder()
	for i := range 40 {
		b.write(fmt.Sprintf("c%d", i), StoreUnfenced, fmt.Sprintf("v%d", i), 0, 1, 100, OK, true)
	}
	b.read("r", StoreUnfenced, 2, 99, "never written")
	l := CheckLinearizable(b.history(t), StoreUnfenced, LinearizabilityOptions{Timeout: 50 * time.Millisecond})
	if l.Valid != Unknown || !strings.Contains(l.Reason, "did not decide") {
		t.Fatalf("got %s (%s) after %v, want unknown", l.Valid, l.Reason, l.Took)
	}
}

func TestExclusion(t *testing.T) {
	tests := []struct {
		name       string
		build      func(b *builder)
		overlaps   int
		overlapped time.Duration
		byKind     map[string]int
	}{
		{"handover after release", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.acquire("c2", 3, 7, 2) // waits
			b.release("c1", 5, 6)
			b.release("c2", 8, 9)
		}, 0, 0, nil},
		{"touching", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.acquire("c2", 3, 5, 2)
			b.release("c1", 5, 6) // invoked the moment c2 learned
			b.release("c2", 9, 10)
		}, 0, 0, nil},
		{"pause past the lease", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-pause", "c1", 3, 20)
			b.acquire("c2", 4, 10, 2)
			b.release("c2", 15, 16)
			b.lost("c1", 21) // learns only after it resumes
		}, 1, 5 * time.Millisecond, map[string]int{"client-pause": 1}},
		{"lost notice ends the belief", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.lost("c1", 8)
			b.acquire("c2", 4, 10, 2)
			b.release("c2", 12, 13)
		}, 0, 0, nil},
		{"crashed holder believes to its last event", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.write("c1", StoreUnfenced, "x", 0, 8, 0, "", false) // killed mid-write
			b.acquire("c2", 4, 10, 2)
			b.release("c2", 20, 21)
		}, 0, 0, nil},
		{"crashed holder acts after the next grant", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.write("c1", StoreUnfenced, "x", 0, 8, 12, OK, true)
			b.acquire("c2", 4, 10, 2)
			b.release("c2", 20, 21)
		}, 1, 2 * time.Millisecond, map[string]int{}},
		{"pending acquire is no hold", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.acquire("c2", 3, 0, 0)
			b.release("c1", 30, 31)
		}, 0, 0, nil},
		{"acquire of unknown outcome is no hold", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.op("c2", Acquire, 3, 4, Info, Event{}, Event{Error: "timeout"})
			b.release("c1", 30, 31)
		}, 0, 0, nil},
		{"three holders at once count once in time", func(b *builder) {
			b.acquire("c1", 1, 2, 0)
			b.acquire("c2", 1, 4, 0)
			b.acquire("c3", 1, 6, 0)
			b.release("c1", 10, 11)
			b.release("c2", 10, 11)
			b.release("c3", 8, 9)
		}, 3, 6 * time.Millisecond, map[string]int{}}, // pairs 12, 13, 23; union [4, 10]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			x := CheckExclusion(b.history(t))
			if x.Count != tt.overlaps || len(x.Overlaps) != tt.overlaps || x.Overlapped != tt.overlapped {
				t.Fatalf("overlaps %d (%d listed), overlapped %v; want %d, %v: %+v", x.Count, len(x.Overlaps), x.Overlapped, tt.overlaps, tt.overlapped, x.Overlaps)
			}
			want := Valid
			if tt.overlaps > 0 {
				want = Invalid
				if x.First == nil || !slices.ContainsFunc(x.First.Excerpt, func(l Line) bool { return l.Mark }) {
					t.Errorf("first violation %+v lacks its excerpt", x.First)
				}
				for k, n := range tt.byKind {
					if x.ByKind[k] != n {
						t.Errorf("by kind %s = %d, want %d", k, x.ByKind[k], n)
					}
				}
				if len(tt.byKind) == 0 && x.Unattributed != x.Count {
					t.Errorf("unattributed %d, want all %d", x.Unattributed, x.Count)
				}
			}
			if x.Valid != want {
				t.Errorf("verdict %s, want %s", x.Valid, want)
			}
		})
	}
}

// TestExclusionFrozenOrRunning: an overlap whose earlier holder was
// frozen by a client pause through it (inherent to a lease) is told from
// one whose earlier holder ran (the lock's failure), and each is blamed
// on the faults that act on its holders or on a server only.
func TestExclusionFrozenOrRunning(t *testing.T) {
	tests := []struct {
		name    string
		build   func(b *builder)
		running int     // of one overlap
		blamed  []int64 // the faults it is attributed to
	}{
		{"frozen through the overlap", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-pause", "c1", 3, 20)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 20) // at its resumption
			b.release("c2", 25, 26)
		}, 0, []int64{1}},
		{"resumed and learned within the grace", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-pause", "c1", 3, 20)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 21) // 1 ms after SIGCONT: the process first has to run
			b.release("c2", 25, 26)
		}, 0, []int64{1}},
		{"resumed and kept believing", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-pause", "c1", 3, 12)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 40) // 28 ms after it runs again
			b.release("c2", 50, 51)
		}, 1, []int64{1}},
		{"two pauses joined", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-pause", "c1", 3, 12)
			b.fault(2, "client-pause", "c1", 11, 30)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 30)
			b.release("c2", 50, 51)
		}, 0, []int64{1, 2}},
		{"seen stopped before the later grant", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.pause(1, "c1", 3, 4, 20, 20)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 20)
			b.release("c2", 25, 26)
		}, 0, []int64{1}},
		{"SIGSTOP sent, not yet taken at the later grant", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.pause(1, "c1", 3, 11, 20, 20) // the start line says 3; stopped at 11
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 20)
			b.release("c2", 25, 26)
		}, 1, []int64{1}},
		{"granted before the pause began", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.acquire("c2", 3, 5, 2) // while c1 ran: the lock's failure
			b.fault(1, "client-pause", "c1", 6, 20)
			b.lost("c1", 20)
			b.release("c2", 25, 26)
		}, 1, nil}, // the pause came after the grant: not its cause
		{"host loss: the holder runs", func(b *builder) {
			b.acquire("c1", 1, 2, 1)
			b.fault(1, "client-host-loss", "c1", 3, 30)
			b.acquire("c2", 4, 10, 2)
			b.lost("c1", 15)
			b.release("c2", 25, 26)
		}, 1, []int64{1}},
		{"faults elsewhere are not blamed", func(b *builder) {
			b.fault(1, "client-host-loss", "c2", 1, 3) // on the later holder, before it asked
			b.acquire("c1", 4, 5, 1)
			b.fault(2, "client-partition", "c3", 6, 30)  // on a third client
			b.fault(3, "server-pause", "srv-1", 6, 8)    // on a server while c1 holds
			b.fault(4, "client-partition", "c2", 7, 9)   // on the later holder while it waits
			b.fault(5, "server-kill", "srv-1", 12, 14)   // after the later grant
			b.fault(6, "server-pause", "srv-1", 1, 4)    // before c1's grant
			b.fault(7, "client-host-loss", "c1", 11, 20) // on c1 after the later grant
			b.acquire("c2", 6, 10, 2)
			b.acquire("c3", 31, 0, 0)
			b.lost("c1", 15)
			b.release("c2", 25, 26)
		}, 1, []int64{3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			x := CheckExclusion(b.history(t))
			if x.Count != 1 || x.Running != tt.running || x.Overlaps[0].FirstPaused != (tt.running == 0) {
				t.Fatalf("%d overlaps, %d running, %+v; want 1, %d", x.Count, x.Running, x.Overlaps, tt.running)
			}
			if got := x.First.Faults; !slices.Equal(got, tt.blamed) {
				t.Errorf("blamed %v, want %v", got, tt.blamed)
			}
			if (x.FirstRunning != nil) != (tt.running > 0) {
				t.Errorf("first running violation %+v with %d running", x.FirstRunning, x.Running)
			}
			var running []int64
			for id, n := range x.RunningByFault {
				if n != 1 {
					t.Errorf("fault %d: %d running overlaps, want 1", id, n)
				}
				running = append(running, id)
			}
			slices.Sort(running)
			if tt.running == 0 && len(running) > 0 || tt.running > 0 && !slices.Equal(running, tt.blamed) {
				t.Errorf("running overlaps blamed on %v, want %v when running", running, tt.blamed)
			}
			if len(tt.blamed) == 0 && x.Unattributed != 1 {
				t.Errorf("unattributed %d, want 1", x.Unattributed)
			}
		})
	}
}

func TestStaleWrites(t *testing.T) {
	// c1 holds token 1 and is paused past its lease; c2 is granted token 2
	// and writes; c1 resumes and writes with its old token, to both
	// stores; then it writes once more after its lost notice.
	b := newBuilder()
	b.acquire("c1", 1, 2, 1)
	b.write("c1", StoreFenced, "a", 1, 3, 4, OK, true)
	b.write("c1", StoreUnfenced, "a", 1, 3, 4, OK, true)
	b.fault(1, "client-pause", "c1", 5, 30)
	b.fault(2, "server-kill", "lock", 40, 45) // later: gets nothing
	b.acquire("c2", 6, 12, 2)
	b.write("c2", StoreFenced, "b", 2, 13, 14, OK, true)
	b.write("c2", StoreUnfenced, "b", 2, 13, 14, OK, true)
	b.write("c1", StoreFenced, "a2", 1, 31, 32, OK, false)
	b.write("c1", StoreUnfenced, "a2", 1, 31, 32, OK, true)
	b.inc("c1", StoreUnfenced, 1, 33, 34, Info, 0, false) // stale, outcome unknown
	b.lost("c1", 35)
	b.write("c1", StoreUnfenced, "a3", 1, 36, 37, OK, true) // after its notice: still stale
	b.release("c1", 38, 39)
	b.write("c1", StoreUnfenced, "a4", 1, 40, 41, OK, true) // after its release: ungranted
	b.release("c2", 50, 51)
	h := b.history(t)

	u := CheckStaleWrites(h, StoreUnfenced)
	if u.Valid != Invalid || u.Count != 2 || u.AfterLost != 1 || u.Writes != 6 || u.UnknownOutcome != 1 || u.Ungranted != 1 || u.Rejected != 0 {
		t.Errorf("unfenced: %+v", u)
	}
	// The write at 31 is within the pause's cause window, the one at 36
	// too ([2, 36] meets [5, 30]).
	if u.ByKind["client-pause"] != 2 || u.ByKind["server-kill"] != 0 || u.ByFault[1] != 2 {
		t.Errorf("unfenced attribution: by kind %v, by fault %v", u.ByKind, u.ByFault)
	}
	if u.First == nil || u.First.At != 31*ms || !strings.Contains(u.First.What, "c2") {
		t.Errorf("unfenced first violation = %+v", u.First)
	}
	marked := 0
	for _, l := range u.First.Excerpt {
		if l.Mark {
			marked++
		}
	}
	if marked != 4 { // c1's grant, c2's grant, the write's invocation and completion
		t.Errorf("excerpt marks %d events, want 4: %+v", marked, u.First.Excerpt)
	}

	f := CheckStaleWrites(h, StoreFenced)
	if f.Valid != Valid || f.Count != 0 || f.Rejected != 1 || f.Writes != 3 {
		t.Errorf("fenced: %+v", f)
	}

	// A grant delivered late: c2 was promoted with token 2 while frozen,
	// its session expired and c3 was granted token 3; c2 resumes and
	// learns of its old grant after c3's. c3's writes are not stale (its
	// token is the newest); c2's write with token 2 is.
	late := newBuilder()
	late.acquire("c2", 1, 20, 2)
	late.acquire("c3", 5, 10, 3)
	late.write("c3", StoreUnfenced, "c", 3, 21, 22, OK, true)
	late.write("c2", StoreUnfenced, "b", 2, 23, 24, OK, true)
	late.release("c2", 25, 26)
	late.release("c3", 27, 28)
	if l := CheckStaleWrites(late.history(t), StoreUnfenced); l.Count != 1 || l.First == nil || !strings.Contains(l.First.What, "c2's write") {
		t.Errorf("late grant: %d stale writes, first %+v; want c2's alone", l.Count, l.First)
	}

	// An increment read before the newer grant and wrote after it (its
	// client frozen in between) is stale when its write left then; without
	// the time its write left it is judged at its invocation, and missed.
	inc := newBuilder()
	inc.acquire("c1", 1, 2, 1)
	inc.fault(1, "client-pause", "c1", 4, 30)
	inc.fault(2, "client-pause", "c3", 4, 30) // another client: not blamed
	inc.incWrite("c1", StoreUnfenced, 1, 3, 30, 31, OK, 0, true)
	inc.inc("c1", StoreFenced, 1, 3, 31, OK, 0, true)
	inc.acquire("c2", 5, 12, 2)
	inc.inc("c2", StoreUnfenced, 2, 13, 14, OK, 0, true)
	inc.inc("c2", StoreFenced, 2, 13, 14, OK, 0, true)
	inc.release("c2", 15, 16)
	inc.acquire("c3", 17, 0, 0)
	h2 := inc.history(t)
	if s := CheckStaleWrites(h2, StoreUnfenced); s.Count != 1 || s.First == nil || s.First.At != 30*ms || !slices.Equal(s.First.Faults, []int64{1}) || !strings.Contains(s.First.What, "its write left") {
		t.Errorf("increment written late: %d stale writes, first %+v; want one at 30 ms blamed on fault 1", s.Count, s.First)
	}
	if s := CheckStaleWrites(h2, StoreFenced); s.Count != 0 {
		t.Errorf("increment without the time its write left: %d stale writes, want 0 (judged at its invocation)", s.Count)
	}

	// Only unknown outcomes: the verdict cannot say valid.
	b2 := newBuilder()
	b2.acquire("c1", 1, 2, 1)
	b2.acquire("c2", 3, 4, 2)
	b2.write("c1", StoreUnfenced, "a", 1, 5, 0, "", false)
	if s := CheckStaleWrites(b2.history(t), StoreUnfenced); s.Valid != Unknown || s.UnknownOutcome != 1 {
		t.Errorf("pending stale write: %+v", s)
	}
}

func TestLostUpdates(t *testing.T) {
	const s = StoreUnfenced
	tests := []struct {
		name    string
		build   func(b *builder)
		want    Validity
		lost    int
		dups    int
		phantom bool
	}{
		{"serial", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c2", s, 0, 3, 4, OK, 1, true)
			b.final(s, 10, 2)
		}, Valid, 0, 0, false},
		{"stale writer overwrites", func(b *builder) {
			b.inc("c1", s, 0, 1, 20, OK, 0, true) // read 0, paused, wrote 1
			b.inc("c2", s, 0, 3, 4, OK, 0, true)
			b.inc("c2", s, 0, 5, 6, OK, 1, true)
			b.final(s, 30, 1)
		}, Invalid, 2, 1, false},
		{"unknown increment counts as maybe", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c2", s, 0, 3, 4, Info, 1, false)
			b.inc("c1", s, 0, 5, 6, OK, 2, true)
			b.final(s, 10, 3)
		}, Valid, 0, 0, false},
		{"rejected increment is not acknowledged", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c2", s, 0, 3, 4, OK, 0, false)
			b.final(s, 10, 1)
		}, Valid, 0, 0, false},
		{"phantom", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c2", s, 0, 3, 4, Fail, 0, false)
			b.final(s, 10, 2)
		}, Invalid, 0, 0, true},
		{"loss shown by the final value only", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c1", s, 0, 3, 4, OK, 1, true)
			b.inc("c2", s, 0, 5, 6, Info, 0, false) // overwrote with 1
			b.final(s, 10, 1)
		}, Invalid, 1, 0, false},
		{"no final read", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
		}, Unknown, 0, 0, false},
		{"no final read, duplicate seen", func(b *builder) {
			b.inc("c1", s, 0, 1, 2, OK, 0, true)
			b.inc("c2", s, 0, 1, 3, OK, 0, true)
		}, Invalid, 1, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			l := CheckLostUpdates(b.history(t), s)
			if l.Valid != tt.want || l.Lost != tt.lost || l.Count != tt.dups || l.Phantom != tt.phantom {
				t.Fatalf("got %s lost=%d dups=%d phantom=%v, want %s %d %d %v (%+v)", l.Valid, l.Lost, l.Count, l.Phantom, tt.want, tt.lost, tt.dups, tt.phantom, l)
			}
			if tt.want == Invalid && (l.First == nil || len(l.First.Excerpt) == 0) {
				t.Errorf("invalid without first violation: %+v", l)
			}
		})
	}
}

func TestWilson(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 5e-4 }
	if r := Wilson(0, 20); r.Lo != 0 || !near(r.Hi, 0.1611) {
		t.Errorf("0 of 20: %+v, want [0, 0.1611]", r)
	}
	if r := Wilson(1, 10); !near(r.Lo, 0.0179) || !near(r.Hi, 0.4042) {
		t.Errorf("1 of 10: %+v, want [0.0179, 0.4042]", r)
	}
	// The soak's scale: 150 faults (statsmodels' proportion_confint,
	// method="wilson", gives the same).
	if r := Wilson(0, 150); r.Lo != 0 || !near(r.Hi, 0.0250) {
		t.Errorf("0 of 150: %+v, want [0, 0.0250]", r)
	}
	if r := Wilson(3, 150); !near(r.Lo, 0.0068) || !near(r.Hi, 0.0571) {
		t.Errorf("3 of 150: %+v, want [0.0068, 0.0571]", r)
	}
	if r := Wilson(12, 150); !near(r.Lo, 0.0464) || !near(r.Hi, 0.1346) {
		t.Errorf("12 of 150: %+v, want [0.0464, 0.1346]", r)
	}
	if r := Wilson(5, 10); !near(r.Lo+r.Hi, 1) || r.Rate != 0.5 {
		t.Errorf("5 of 10 is not symmetric: %+v", r)
	}
	if r := Wilson(7, 7); r.Hi != 1 || r.Lo <= 0.5 {
		t.Errorf("7 of 7: %+v", r)
	}
	if r := Wilson(0, 0); r.Lo != 0 || r.Hi != 1 {
		t.Errorf("0 of 0: %+v, want [0, 1]", r)
	}
	for _, tt := range []struct {
		hi   float64
		want int
	}{{0.15, 22}, {0.10, 35}, {0.5, 4}, {0, 0}, {1, 0}} {
		n := TrialsForUpperBound(tt.hi)
		if n != tt.want {
			t.Errorf("TrialsForUpperBound(%v) = %d, want %d", tt.hi, n, tt.want)
			continue
		}
		if n > 0 && (Wilson(0, n).Hi > tt.hi || n > 1 && Wilson(0, n-1).Hi <= tt.hi) {
			t.Errorf("%d trials is not the fewest for %v", n, tt.hi)
		}
	}
}

// TestCheck runs every checker on one history of a pause: the lock
// alone lets two clients hold and the unfenced store take a stale write
// and lose an increment; the fenced store rejects both.
func TestCheck(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 1, 2, 1)
	b.inc("c1", StoreFenced, 1, 3, 4, OK, 0, true)
	b.inc("c1", StoreUnfenced, 1, 3, 4, OK, 0, true)
	b.fault(1, "client-pause", "c1", 5, 30)
	b.fault(2, "server-pause", "lock", 60, 70)
	b.events = append(b.events, Event{T: 80 * ms, Process: NemesisProcess, Type: Skip, F: FuncFault, ID: 3, Fault: &Fault{Kind: "clock-step"}, Error: "no wall-clock server"})
	b.acquire("c2", 6, 12, 2)
	b.inc("c2", StoreFenced, 2, 13, 14, OK, 1, true)
	b.inc("c2", StoreUnfenced, 2, 13, 14, OK, 1, true)
	b.write("c2", StoreFenced, "b", 2, 15, 16, OK, true)
	b.write("c2", StoreUnfenced, "b", 2, 15, 16, OK, true)
	b.release("c2", 17, 18)
	b.inc("c1", StoreFenced, 1, 31, 32, OK, 1, false) // read before the pause
	b.inc("c1", StoreUnfenced, 1, 31, 32, OK, 1, true)
	b.release("c1", 33, 34)
	b.final(StoreFenced, 90, 2)
	b.final(StoreUnfenced, 90, 2)
	v := Check(b.history(t), Options{Name: "redis", VisualizationDir: t.TempDir()})

	if v.Valid != Invalid || v.Exclusion.Count != 1 || v.Faults.Applied != 2 || v.Faults.Skipped["clock-step"] != 1 ||
		v.Faults.SkipReasons["clock-step"] != "no wall-clock server" || v.Operations != 12 {
		t.Fatalf("verdict: %+v", v)
	}
	byStore := map[string]StoreVerdict{}
	for _, s := range v.Stores {
		byStore[s.Store] = s
	}
	f, u := byStore[StoreFenced], byStore[StoreUnfenced]
	if f.Valid != Valid || f.StaleWrites.Rejected != 1 || f.LostUpdates.Lost != 0 || f.Rate.Violations != 0 || f.Rate.Trials != 2 {
		t.Errorf("fenced: %+v", f)
	}
	if u.Valid != Invalid || u.StaleWrites.Count != 1 || u.LostUpdates.Lost != 1 || u.LostUpdates.Acknowledged != 3 {
		t.Errorf("unfenced: %+v", u)
	}
	// Trials are the two applied faults; only the pause has violations.
	if u.Rate.Violations != 1 || u.Rate.Trials != 2 || u.RateByKind["client-pause"].Violations != 1 || u.RateByKind["server-pause"].Violations != 0 {
		t.Errorf("unfenced rates: %+v %+v", u.Rate, u.RateByKind)
	}
	if v.Rate.Violations != 1 || v.Rate.Trials != 2 {
		t.Errorf("rate: %+v", v.Rate)
	}
	// The stale write is the pause's; the overlap is a frozen holder's,
	// so no fault has a running double holder.
	if u.StaleRate.Violations != 1 || u.StaleRateByKind["client-pause"].Violations != 1 || f.StaleRate.Violations != 0 || f.StaleRate.Trials != 2 {
		t.Errorf("stale rates: unfenced %+v %+v, fenced %+v", u.StaleRate, u.StaleRateByKind, f.StaleRate)
	}
	if v.RunningRate.Violations != 0 || v.RunningRate.Trials != 2 || v.RunningRateByKind["client-pause"].Trials != 1 {
		t.Errorf("running rate: %+v %+v", v.RunningRate, v.RunningRateByKind)
	}

	if v.Faults.Applied != 2 || v.Operations != 12 || v.Exclusion.Count != 1 || v.Exclusion.Running != 0 || v.Exclusion.Overlapped != 5*time.Millisecond {
		t.Errorf("faults %d, operations %d, exclusion %+v", v.Faults.Applied, v.Operations, v.Exclusion)
	}
	if f.Linearizability.Valid != Valid || u.Linearizability.Valid != Valid {
		t.Errorf("linearizable: fenced %s, unfenced %s", f.Linearizability.Valid, u.Linearizability.Valid)
	}
}
