package network

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPacketHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h packetHeap
	var want []packet
	for i := range 2000 {
		p := packet{due: r.Int64N(50), seq: uint64(i)}
		h.push(p)
		want = append(want, p)
	}
	slices.SortStableFunc(want, func(a, b packet) int { return int(a.due - b.due) })
	for i, w := range want {
		got := h.pop()
		if got.due != w.due || got.seq != w.seq {
			t.Fatalf("pop %d = (%d, %d), want (%d, %d): equal due times leave in arrival order", i, got.due, got.seq, w.due, w.seq)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d packets left", len(h))
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 || h.maxValue() != 0 {
		t.Fatal("an empty histogram must report 0")
	}
	for v := 1; v <= 10000; v++ {
		h.record(time.Duration(v) * time.Microsecond)
	}
	h.record(-time.Second) // counted as 0
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.99, 9900 * time.Microsecond}} {
		got := h.quantile(tc.q)
		if rel := float64(got-tc.want) / float64(tc.want); rel < -1.0/16 || rel > 1.0/16 {
			t.Errorf("quantile(%v) = %v, want %v within 1/16", tc.q, got, tc.want)
		}
	}
	if m := h.maxValue(); m < 9*time.Millisecond || m > 11*time.Millisecond {
		t.Errorf("max = %v, want about 10ms", m)
	}
	var earlier histogram
	earlier.record(time.Microsecond)
	d := h.sub(&earlier)
	if d.total() != h.total()-1 {
		t.Errorf("sub: %d counts, want %d", d.total(), h.total()-1)
	}
	// Every bucket's middle falls back into the bucket.
	for i := range len(h.Counts) - 1 {
		if got := bucketOf(bucketMid(i)); got != i {
			t.Fatalf("bucketOf(bucketMid(%d)) = %d", i, got)
		}
	}
}

func TestPathParams(t *testing.T) {
	bench := &lineHost{}
	near := &lineHost{link: linkParams{RTT: 1, Hold: 10}}
	far := &lineHost{link: linkParams{RTT: 2, Hold: 20}}
	for _, tc := range []struct {
		src, dst int
		sh, dh   *lineHost
		want     int64
	}{
		{0, 1, bench, near, 10}, // bench to a host: the host's link
		{1, 0, near, bench, 10}, // and back
		{1, 2, near, far, 20},   // between hosts: the farther one's
		{2, 1, far, near, 20},
	} {
		if got := pathParams(tc.src, tc.dst, tc.sh, tc.dh).Hold; got != tc.want {
			t.Errorf("path %d→%d holds %d, want %d", tc.src, tc.dst, got, tc.want)
		}
	}
}

func TestUnavailableSaysWhatIsMissing(t *testing.T) {
	if err := unavailable(true, nil); err != nil {
		t.Fatalf("nothing missing: %v", err)
	}
	for _, tc := range []struct {
		privileged bool
		tunErr     error
		says       []string
	}{
		{false, nil, []string{"root", "CAP_NET_ADMIN", "--network loopback"}},
		{true, os.ErrNotExist, []string{"/dev/net/tun", "modprobe tun"}},
		{false, os.ErrNotExist, []string{"root", "/dev/net/tun"}},
	} {
		err := unavailable(tc.privileged, tc.tunErr)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("unavailable(%v, %v) = %v, want ErrUnavailable", tc.privileged, tc.tunErr, err)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("unavailable(%v, %v) = %q, want it to say %q", tc.privileged, tc.tunErr, err, s)
			}
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  int
		ok   bool
	}{
		{"mlb-3", 3, true},
		{"mlb-3-redis-1", 3, true},
		{"mlb-511-a", 511, true},
		{"mlb-512-a", 0, false},
		{"mlb-03-a", 0, false},
		{"mlb-link", 0, false},
		{"mlb-", 0, false},
		{"other-3", 0, false},
	} {
		run, ok := runOfName("mlb-", tc.name)
		if run != tc.run || ok != tc.ok {
			t.Errorf("runOfName(%q) = %d, %v; want %d, %v", tc.name, run, ok, tc.run, tc.ok)
		}
	}
	for _, p := range []string{"mlb-", "x", "bench-a-"} {
		if err := checkPrefix(p); err != nil {
			t.Errorf("checkPrefix(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "toolongprefix", "MLB-", "mlb_", "mlb7", "7mlb"} {
		if checkPrefix(p) == nil {
			t.Errorf("checkPrefix(%q) accepted", p)
		}
	}
	if got := runAddr(257, 2).String(); got != "198.19.1.2" {
		t.Errorf("runAddr(257, 2) = %s", got)
	}
	// Every device name fits IFNAMSIZ.
	if n := benchLinkName("abcdefgh", runSlots-1); len(n) > 15 {
		t.Errorf("device name %q is too long", n)
	}
}

func TestRunLock(t *testing.T) {
	needNetwork(t) // /run is root's
	const prefix = "mlbl-"
	a, err := tryLock(prefix, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryLock(prefix, 7); !errors.Is(err, errBusy) {
		t.Fatalf("second lock of a held slot: %v, want errBusy", err)
	}
	a.release()
	if _, err := os.Stat(a.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released lock file still there: %v", err)
	}
	b, err := tryLock(prefix, 7)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	b.release()
	if _, err := os.Stat(lockDir(prefix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the last release left the lock directory: %v", err)
	}
}

// TestSubWindowsMostHeld: the most packets held in a window is the
// window's, not the most since the start.
func TestSubWindowsMostHeld(t *testing.T) {
	var earlier, later Stats
	earlier.held.record(120)
	earlier.MaxQueued = 120
	later.held = earlier.held
	for _, depth := range []time.Duration{1, 3, 5} {
		later.held.record(depth)
	}
	later.MaxQueued = 120
	if got := later.Sub(earlier).MaxQueued; got != 5 {
		t.Errorf("most held in the window %d, want 5 (120 was before it)", got)
	}
}
