package zookeeper

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

func TestParseClassPath(t *testing.T) {
	manifest := "Manifest-Version: 1.0\r\nClass-Path: /usr/share/java/a.jar /usr/share/java/b.j\r\n ar c.jar\r\nCreated-By: x\r\n"
	got, err := parseClassPath(strings.NewReader(manifest))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/share/java/a.jar", "/usr/share/java/b.jar", "c.jar"}
	if !slices.Equal(got, want) {
		t.Errorf("parseClassPath = %q, want %q", got, want)
	}
}

func TestPredecessor(t *testing.T) {
	children := []string{"lock-0000000007", "lock-0000000003", "lock-0000000012", "other", "lock-0000000005"}
	for _, c := range []struct {
		seq   int64
		pred  string
		first bool
	}{
		{3, "", true},
		{5, "lock-0000000003", false},
		{7, "lock-0000000005", false},
		{12, "lock-0000000007", false},
	} {
		pred, first := predecessor(children, c.seq)
		if pred != c.pred || first != c.first {
			t.Errorf("predecessor(%d) = %q, %v; want %q, %v", c.seq, pred, first, c.pred, c.first)
		}
	}
}

func TestMemberConfig(t *testing.T) {
	peers := []string{"net-zookeeper-1:2888", "net-zookeeper-2:2888", "net-zookeeper-3:2888"}
	cfg, err := MemberConfig(bench.ServerArgs{Listen: "0.0.0.0:2181", PeerListen: "0.0.0.0:2888", Replica: 1, Peers: peers}, "/data/data")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range append(slices.Clone(ServerSettings),
		"dataDir=/data/data", "clientPort=2181", "clientPortAddress=0.0.0.0",
		"server.1=net-zookeeper-1:2888:2889", "server.2=net-zookeeper-2:2888:2889", "server.3=net-zookeeper-3:2888:2889",
		"quorumListenOnAllIPs=true") {
		if !slices.Contains(strings.Split(cfg, "\n"), line) {
			t.Errorf("config lacks %q:\n%s", line, cfg)
		}
	}
	// On loopback the member binds the address its peers use.
	local := []string{"127.0.0.1:4001", "127.0.0.1:4003", "127.0.0.1:4005"}
	cfg, err = MemberConfig(bench.ServerArgs{Listen: "127.0.0.1:5000", PeerListen: local[2], Replica: 2, Peers: local}, "/d")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cfg, "quorumListenOnAllIPs") || !strings.Contains(cfg, "server.3=127.0.0.1:4005:") {
		t.Errorf("loopback config:\n%s", cfg)
	}
	// Members sharing an address get the same free election ports, none
	// of them a quorum port + 1.
	again, err := MemberConfig(bench.ServerArgs{Listen: "127.0.0.1:5001", PeerListen: local[0], Replica: 0, Peers: local}, "/e")
	if err != nil {
		t.Fatal(err)
	}
	servers := func(cfg string) []string {
		var lines []string
		for line := range strings.Lines(cfg) {
			if strings.HasPrefix(line, "server.") {
				lines = append(lines, line)
				if strings.HasSuffix(line, ":4002\n") || strings.HasSuffix(line, ":4004\n") || strings.HasSuffix(line, ":4006\n") {
					t.Errorf("election port next to a quorum port: %q", line)
				}
			}
		}
		return lines
	}
	if a, b := servers(cfg), servers(again); !slices.Equal(a, b) || len(a) != 3 {
		t.Errorf("members of one ensemble disagree: %q vs %q", a, b)
	}
	if MyID(2) != "3\n" {
		t.Errorf("MyID(2) = %q", MyID(2))
	}
}

func TestFindInstall(t *testing.T) {
	in, err := FindInstall(context.Background())
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	names := make([]string, len(in.Jars))
	for i, j := range in.Jars {
		names[i] = filepath.Base(j)
	}
	// The jars the server cannot start without: its own, jute's records,
	// the logging facade and its binding.
	for _, want := range []string{"zookeeper-", "zookeeper-jute", "slf4j-api", "slf4j-simple"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("classpath %v lacks %s*", names, want)
		}
	}
	if _, err := os.Stat(in.Java); err != nil {
		t.Error(err)
	}
}

// TestRecipe checks the recipe on a local ensemble: waiters queue in
// the order they came, each watching only its predecessor (the members
// count one watch per waiter), the tokens rise, and a holder whose
// connection is lost learns it at once (Lost), while the lock stays its
// own until its session ends or it releases.
func TestRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble: not under -short (make test runs it)")
	}
	d := benchtest.Start(t, Server)
	servers := d.Servers(Server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := New(Config{Servers: bench.Addrs(servers), Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	holder, err := l.Acquire(ctx, "recipe")
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	type grant struct {
		i int
		h bench.Held
	}
	granted := make(chan grant, waiters)
	for i := range waiters {
		go func() {
			h, err := l.Acquire(ctx, "recipe")
			if err != nil {
				t.Error(err)
				return
			}
			granted <- grant{i, h}
		}()
		// The next waiter comes once this one watches its predecessor.
		waitWatches(ctx, t, servers, i+1)
	}
	tok, _ := holder.Token()
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for want := range waiters {
		g := <-granted
		if g.i != want {
			t.Errorf("grant %d went to waiter %d: not in queue order", want, g.i)
		}
		next, _ := g.h.Token()
		if next <= tok {
			t.Errorf("token %d after %d", next, tok)
		}
		tok = next
		if err := g.h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The session timeouts the ensemble grants: the lease within the
	// bounds, clamped outside them.
	for _, c := range []struct{ lease, want time.Duration }{
		{600 * time.Millisecond, 600 * time.Millisecond},
		{100 * time.Millisecond, MinSessionTimeout},
		{30 * time.Second, 30 * time.Second},
		{90 * time.Second, MaxSessionTimeout},
	} {
		set, err := grantedTimeout(ctx, servers, c.lease)
		if err != nil {
			t.Fatal(err)
		}
		if got := set["session_timeout"]; got != c.want.String() {
			t.Errorf("lease %v: granted session timeout %s, want %v", c.lease, got, c.want)
		}
	}

	// A lost connection: kill the member the holder's session uses.
	h, err := l.Acquire(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	hs := h.(*held)
	if got := hs.s.Timeout(); got != 2*time.Second {
		t.Errorf("granted session timeout %v, want the 2s lease", got)
	}
	var victim bench.Server
	for _, s := range servers {
		if s.Addr() == hs.s.conn.Server() {
			victim = s
		}
	}
	if victim == nil {
		t.Fatalf("session on %s, not a member", hs.s.conn.Server())
	}
	killed := time.Now()
	if err := victim.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	defer victim.Restart(context.WithoutCancel(ctx))
	select {
	case <-h.Lost():
		t.Logf("Lost %v after the member's kill", time.Since(killed).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		t.Fatal("Lost not closed within the session timeout of the member's kill")
	}
	// Another client is granted once the lost holder releases (its
	// delete goes through a reconnected session) or its session expires.
	other, err := New(Config{Servers: bench.Addrs(servers), Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := h.Release(ctx); err != nil {
		t.Logf("release of the lost holder: %v", err)
	}
	h2, err := other.Acquire(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitWatches waits until the members count n watches in all.
func waitWatches(ctx context.Context, t *testing.T, servers []bench.Server, n int) {
	t.Helper()
	for {
		total := 0
		for _, s := range servers {
			out, err := FourLetter(ctx, s.Addr(), "mntr")
			if err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(out) {
				if v, ok := strings.CutPrefix(line, "zk_watch_count\t"); ok {
					w, _ := strconv.Atoi(strings.TrimSpace(v))
					total += w
				}
			}
		}
		if total == n {
			return
		}
		if total > n {
			t.Fatalf("%d watches for %d waiters: more than one watch per waiter", total, n)
		}
		if err := bench.Sleep(ctx, 20*time.Millisecond); err != nil {
			t.Fatalf("%d watches, want %d: %v", total, n, err)
		}
	}
}
