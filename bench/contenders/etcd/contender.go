package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
)

// Members is the cluster size the contender runs: the smallest that keeps
// granting with one member down.
const Members = 3

// Server is the etcd cluster the contender runs against: Members members
// of the server built from ServerModule (BuildServer on the local
// backend, Image on the containers backend), each naming all as its
// initial cluster. A member is ready once /health says a leader is
// elected, so the backends start them together.
var Server = &bench.ServerSpec{
	Name:     "etcd",
	Replicas: Members,
	Args:     serverArgs,
	Command: func(ctx context.Context, a bench.ServerArgs) ([]string, error) {
		bin, err := BuildServer(ctx)
		if err != nil {
			return nil, err
		}
		return append([]string{bin}, serverArgs(a)...), nil
	},
	Image:    Image,
	Port:     ClientPort,
	PeerPort: PeerPort,
	Ready:    func(ctx context.Context, addr, _ string) error { return Healthy(ctx, addr) },
	Version:  version,
}

// version asks a member (host:port of its client URL) for GET /version.
func version(ctx context.Context, addr string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("etcd: GET /version: %w", err)
	}
	defer resp.Body.Close()
	var v struct {
		Server string `json:"etcdserver"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&v); err != nil || v.Server == "" {
		return "", fmt.Errorf("etcd: GET /version: %s, %v", resp.Status, err)
	}
	return "etcd " + v.Server, nil
}

// serverArgs is MemberArgs for replica a.Replica: it is advertised at the
// host its peers reach it at (its container name, or 127.0.0.1) and keeps
// its data in a.Dir, or in the image's /data/member.
func serverArgs(a bench.ServerArgs) []string {
	cluster := make([]Member, len(a.Peers))
	for i, peer := range a.Peers {
		cluster[i] = Member{Name: "etcd-" + strconv.Itoa(i), PeerURL: "http://" + peer}
	}
	m := cluster[a.Replica]
	host, _, _ := net.SplitHostPort(a.Peers[a.Replica])
	_, port, _ := net.SplitHostPort(a.Listen)
	m.ClientURL = "http://" + net.JoinHostPort(host, port)
	m.ListenClientURL, m.ListenPeerURL = "http://"+a.Listen, "http://"+a.PeerListen
	data := "/data/member"
	if a.Dir != "" {
		data = filepath.Join(a.Dir, "data")
	}
	return MemberArgs(m, cluster, data)
}

// Contender is the etcd row of the contender table.
func Contender() bench.Contender {
	set := Config{Endpoints: make([]string, Members)}.Settings()
	delete(set, "lease") // the runner records it
	delete(set, "ttl")   // recorded per run by ServerSettings
	set["ttl_rule"] = "the lease rounded up to whole seconds, at least 1s (etcd lease TTLs are whole seconds)"
	set["counters"] = CountsSource
	return bench.Contender{
		Name: "etcd", Label: "etcd (3 members)", Family: "etcd", Colour: "#17a2b8",
		Server:         Server,
		Settings:       set,
		ServerSettings: grantedTTL,
		New: func(_ context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			return New(Config{Endpoints: addrs, Lease: lease})
		},
		Counters:        newCounters,
		WatchLock:       WatchLock,
		WatchLockSource: WatchSource,
		Claims:          results.OfKind(results.ClaimOther, Claims()),
		Notes:           Notes(),
		Caps:            Caps,
	}
}

// Caps are the variants etcd does not run, for the suite's time budget:
// those beyond what it holds on this machine (measured in the full run
// 20261201T002715Z), which take it minutes, and in quick runs its slowest
// steps, which the full run measures.
var Caps = []bench.Cap{
	{Scenario: "scale", Variant: "idle-max*", Reason: "etcd already lost most sessions at 10k (idle-10k: 5,109 of 10,000 held; idle-10k-lease2s: 1,605); idle-max took it 87 s (30s lease) and 81 s (2s) per repetition"},
	{Scenario: "scale", Variant: "queue-10k", Reason: "etcd could not open 10,001 waiters (9,234 opened, then a session failed) after 94 s"},
	{Scenario: "scale", Variant: "idle-10k-lease2s", Reason: "etcd kept 84 of 10,000 sessions at the 2s lease (full run 20261203T151155Z, 68 s); idle-10k shows where it stops holding (4,385 of 10,000 at 30s), idle-1k-lease2s that it holds 1,000 at 2s"},
	{Scenario: "scale", Variant: "idle-10k", QuickOnly: true, Reason: "quick: etcd's 10k idle sessions take 39 s (the full run measures it)"},
	{Scenario: "scale", Variant: "queue-1k", QuickOnly: true, Reason: "quick: the full run measures etcd's 1k queue"},
	{Scenario: "scale", Variant: "churn-*", QuickOnly: true, Reason: "quick: the full run measures etcd's churn"},
	{Scenario: "failover", Variant: "graceful-restart", QuickOnly: true, Reason: "quick: etcd's graceful restart takes 17 s (the full run measures it; restart stays)"},
	{Scenario: "failover", Variant: "restart-*", QuickOnly: true, Reason: "quick: etcd's split variants take 15 s together (the full run measures them)"},
}

// grantedTTL records the TTL the Locker asks for (TTLSeconds of the
// lease) and the TTL the cluster grants, read by granting and revoking
// one lease: etcd raises a TTL below its minimum (1.5 × the election
// timeout, rounded up: 2s with the default flags). "ttl" is the granted
// one, a duration claims can take as their bound.
func grantedTTL(ctx context.Context, servers []bench.Server, lease time.Duration) (results.Settings, error) {
	want := TTLSeconds(lease)
	set := results.Settings{"ttl_requested": (time.Duration(want) * time.Second).String()}
	l, err := New(Config{Endpoints: bench.Addrs(servers), Lease: lease})
	if err != nil {
		return set, err
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	g, err := l.client.Grant(ctx, want)
	if err != nil {
		return set, fmt.Errorf("etcd: lease grant: %w", err)
	}
	l.revoke(g.ID)
	set["ttl"] = (time.Duration(g.TTL) * time.Second).String()
	return set, nil
}

// counters reads the cluster's /metrics (ReadCounts) as bench.Counts:
// commands, Txn attempts, and watches as the waiting count.
type counters struct{ endpoints []string }

func newCounters(servers []bench.Server) (bench.Coordinator, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no etcd members", bench.ErrNoCounters)
	}
	return counters{endpoints: bench.Addrs(servers)}, nil
}

// Counts implements bench.Coordinator.
func (c counters) Counts(ctx context.Context) (bench.Counts, error) {
	n, err := ReadCounts(ctx, c.endpoints)
	if err != nil {
		return bench.Counts{}, err
	}
	return bench.Counts{Commands: n.Commands, Attempts: n.Attempts, Waiting: n.Watches, KeepAlives: n.KeepAlives}, nil
}

// Close implements bench.Coordinator.
func (counters) Close() error { return nil }
