package etcd

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/monolock/monolock-bench/bench/benchtest"
)

func TestTTLSeconds(t *testing.T) {
	for _, c := range []struct {
		lease time.Duration
		want  int64
	}{
		{time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{10 * time.Second, 10},
	} {
		if got := TTLSeconds(c.lease); got != c.want {
			t.Errorf("TTLSeconds(%v) = %d, want %d", c.lease, got, c.want)
		}
	}
}

func TestMemberArgs(t *testing.T) {
	cluster := []Member{
		{Name: "etcd-0", ClientURL: "http://a:2379", PeerURL: "http://a:2380", ListenClientURL: "http://0.0.0.0:2379", ListenPeerURL: "http://0.0.0.0:2380"},
		{Name: "etcd-1", ClientURL: "http://b:2379", PeerURL: "http://b:2380"},
	}
	got := strings.Join(MemberArgs(cluster[0], cluster, "/data/member"), " ")
	for _, want := range []string{
		"--name etcd-0", "--data-dir /data/member",
		"--listen-client-urls http://0.0.0.0:2379", "--advertise-client-urls http://a:2379",
		"--listen-peer-urls http://0.0.0.0:2380", "--initial-advertise-peer-urls http://a:2380",
		"--initial-cluster etcd-0=http://a:2380,etcd-1=http://b:2380", "--initial-cluster-state new",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("MemberArgs = %q, missing %q", got, want)
		}
	}
	if got := strings.Join(MemberArgs(cluster[1], cluster, "d"), " "); !strings.Contains(got, "--listen-client-urls http://b:2379") {
		t.Errorf("an empty listen URL should default to the advertised one: %q", got)
	}
}

// TestReadCounts serves a member's /metrics as etcd writes them (the
// proposals a gauge) and checks the sums, then the errors: a status other
// than 200, and a body without the proposals.
func TestReadCounts(t *testing.T) {
	body := `# HELP grpc_server_msg_received_total Total number of RPC stream messages received on the server.
# TYPE grpc_server_msg_received_total counter
grpc_server_msg_received_total{grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 7
grpc_server_msg_received_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
grpc_server_msg_received_total{grpc_method="LeaseKeepAlive",grpc_service="etcdserverpb.Lease",grpc_type="bidi_stream"} 5
grpc_server_msg_received_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 2
grpc_server_msg_received_total{grpc_method="Status",grpc_service="etcdserverpb.Maintenance",grpc_type="unary"} 100
grpc_server_msg_received_total{grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary"} 100
# HELP etcd_server_proposals_committed_total The total number of consensus proposals committed.
# TYPE etcd_server_proposals_committed_total gauge
etcd_server_proposals_committed_total 42
`
	serve := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	ctx := context.Background()
	member := serve(http.StatusOK, body)
	got, err := ReadCounts(ctx, []string{member, serve(http.StatusOK, strings.ReplaceAll(body, " 42\n", " 40\n"))})
	if err != nil {
		t.Fatal(err)
	}
	// Summed over the two members but the proposals, the largest.
	if want := (Counts{Commands: 34, Attempts: 14, Watches: 4, KeepAlives: 10, Proposals: 42}); got != want {
		t.Errorf("ReadCounts = %+v, want %+v", got, want)
	}
	if _, err := ReadCounts(ctx, []string{member, serve(http.StatusServiceUnavailable, body)}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a member answering 503: err = %v, want the status", err)
	}
	noProposals, _, _ := strings.Cut(body, "# HELP etcd_server_proposals")
	if _, err := ReadCounts(ctx, []string{serve(http.StatusOK, noProposals)}); err == nil || !strings.Contains(err.Error(), MetricProposals) {
		t.Errorf("a member without %s: err = %v, want it named", MetricProposals, err)
	}
	if _, err := ReadCounts(ctx, []string{serve(http.StatusOK, "etcd_server_proposals_committed_total forty\n")}); err == nil {
		t.Error("a non-numeric value parsed")
	}
}

// startCluster builds the server (cached) and starts a local cluster of n
// members, stopped at the end of the test.
func startCluster(t *testing.T, n int) *LocalCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an etcd cluster: not under -short (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin, err := BuildServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartLocalCluster(ctx, bin, t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func newLocker(t *testing.T, endpoints []string, lease time.Duration) *Locker {
	t.Helper()
	l, err := New(Config{Endpoints: endpoints, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLocalCluster runs the mutual-exclusion check on a real three-member
// cluster of child processes, then checks the token, the loss signal and
// the counters.
func TestLocalCluster(t *testing.T) {
	c := startCluster(t, 3)
	l := newLocker(t, c.Endpoints(), 1500*time.Millisecond)
	if l.TTL() != 2 {
		t.Errorf("TTL %d for a 1.5s lease, want 2", l.TTL())
	}
	before, err := ReadCounts(context.Background(), c.Endpoints())
	if err != nil {
		t.Fatal(err)
	}

	benchtest.MutualExclusion(t, l, "exclusion", 4, 15, 2*time.Minute)

	after, err := ReadCounts(context.Background(), c.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	// 60 claims: at least one Txn each; the Txn and the Delete are
	// proposals. Sessions are reused (4 workers, 4 sessions), so there is
	// no lease grant and revoke per acquisition.
	if d := after.Attempts - before.Attempts; d < 60 {
		t.Errorf("%d Txn calls for 60 acquisitions, want at least 60", d)
	}
	if d := after.Commands - before.Commands; d < 2*60 {
		t.Errorf("%d commands for 60 acquisitions, want at least 120 (txn, delete)", d)
	}
	if d := after.Proposals - before.Proposals; d < 2*60 || d >= 4*60 {
		t.Errorf("%d proposals for 60 acquisitions, want at least 120 (txn, delete) and fewer than 240 (a grant and revoke per acquisition)", d)
	}

	t.Run("a held lock's renewals count as keep-alives", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := l.Acquire(ctx, "renewed")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		start, err := ReadCounts(ctx, c.Endpoints())
		if err != nil {
			t.Fatal(err)
		}
		// The session renews every TTL/3; wait for one renewal, bounded
		// by ctx rather than a fixed time.
		for {
			now, err := ReadCounts(ctx, c.Endpoints())
			if err != nil {
				t.Fatalf("no keep-alive counted while the lock was held: %v", err)
			}
			if now.KeepAlives > start.KeepAlives {
				if now.Commands-start.Commands < now.KeepAlives-start.KeepAlives {
					t.Errorf("keep-alives %d not among the commands %d", now.KeepAlives-start.KeepAlives, now.Commands-start.Commands)
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("token is the key's create revision", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := l.Acquire(ctx, "token")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		tok, ok := h.Token()
		if !ok {
			t.Fatal("no token")
		}
		resp, err := l.client.Get(ctx, DefaultKeyPrefix+"token/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || uint64(resp.Kvs[0].CreateRevision) != tok {
			t.Fatalf("token %d, keys %v", tok, resp.Kvs)
		}
	})

	t.Run("waiter is granted after release, with a larger token", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h1, err := l.Acquire(ctx, "handover")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan uint64, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			h2, err := l.Acquire(ctx, "handover")
			if err != nil {
				t.Error(err)
				close(got)
				return
			}
			tok, _ := h2.Token()
			got <- tok
			h2.Release(ctx)
		})
		select {
		case <-got:
			t.Fatal("second acquisition granted while the first is held")
		case <-time.After(300 * time.Millisecond):
		}
		tok1, _ := h1.Token()
		if err := h1.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if tok2 := <-got; tok2 <= tok1 {
			t.Errorf("token %d after %d", tok2, tok1)
		}
		wg.Wait()
	})

	t.Run("lost when the lease is revoked", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := l.Acquire(ctx, "lost")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		select {
		case <-h.Lost():
			t.Fatal("lost at once")
		default:
		}
		if _, err := l.client.Revoke(ctx, h.(*held).s.Lease()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.Lost():
		case <-ctx.Done():
			t.Fatal("Lost not closed after the lease was revoked")
		}
	})

	t.Run("cancelled wait leaves no key", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := l.Acquire(ctx, "cancel")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release(ctx)
		wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer wcancel()
		if _, err := l.Acquire(wctx, "cancel"); err != context.DeadlineExceeded {
			t.Fatalf("Acquire on a held key with an expiring ctx: %v, want DeadlineExceeded", err)
		}
		resp, err := l.client.Get(ctx, DefaultKeyPrefix+"cancel/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 {
			t.Errorf("%d keys after a cancelled wait, want only the holder's", len(resp.Kvs))
		}
	})
}

// TestMembersDown checks that a three-member cluster keeps granting with
// one member killed, and with two killed grants nothing and loses the
// held lock once its lease runs out on the client (TTL 1s).
func TestMembersDown(t *testing.T) {
	c := startCluster(t, 3)
	c.Members[2].Kill(context.Background())
	l := newLocker(t, c.Endpoints(), time.Second)
	benchtest.MutualExclusion(t, l, "one-down", 3, 5, 2*time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := l.Acquire(ctx, "two-down")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Without a quorum the release cannot complete: bound it.
		rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer rcancel()
		_ = h.Release(rctx)
	}()
	c.Members[1].Kill(context.Background())
	start := time.Now()
	select {
	case <-h.Lost():
		t.Logf("lost %v after the quorum went", time.Since(start).Round(time.Millisecond))
	case <-ctx.Done():
		t.Fatal("held lock not lost within a minute of losing the quorum")
	}
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	defer wcancel()
	if _, err := l.Acquire(wctx, "no-quorum"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire without a quorum: %v, want DeadlineExceeded", err)
	}
}
