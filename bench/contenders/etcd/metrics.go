package etcd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Series read by ReadCounts from each member's /metrics.
const (
	// MetricReceived counts gRPC request messages received, labelled by
	// service and method: one per unary call (Txn, Range, DeleteRange,
	// LeaseGrant, LeaseRevoke), one per stream message (LeaseKeepAlive,
	// Watch create/cancel).
	MetricReceived = "grpc_server_msg_received_total"
	// MetricProposals is the number of consensus proposals committed
	// (quorum writes); every member reports the cluster's count as it has
	// seen it, so ReadCounts takes the largest.
	MetricProposals = "etcd_server_proposals_committed_total"
)

// CountsSource says what Counts holds, for results.json.
const CountsSource = "etcd /metrics of every member: " + MetricReceived +
	" of the etcdserverpb services summed (commands; Txn alone: attempts; Watch alone: watches, which a queued waiter opens; LeaseKeepAlive alone: keep-alives), and the largest " +
	MetricProposals + " (quorum writes)"

// Counts are cumulative counters of an etcd cluster.
type Counts struct {
	// Commands is every gRPC request message the members received from
	// clients (KV, Lease and Watch services), summed over members;
	// health checks and the Maintenance service are left out.
	Commands int64
	// Attempts are Txn calls: Mutex.Lock tries with one Txn.
	Attempts int64
	// Watches are Watch stream messages (create and cancel requests): a
	// Mutex.Lock that finds the lock held watches its predecessor's key,
	// so the count rises once a waiter queues.
	Watches int64
	// KeepAlives are LeaseKeepAlive stream messages: one per lease renewal
	// (a session's every TTL/3).
	KeepAlives int64
	// Proposals are committed consensus proposals (quorum writes).
	Proposals int64
}

// metricsTimeout bounds one scrape.
const metricsTimeout = 5 * time.Second

// ReadCounts scrapes /metrics on every endpoint (a member's client
// host:port) and returns the cluster's counters. A member that does not
// answer is an error: take deltas only between reads of the same members.
func ReadCounts(ctx context.Context, endpoints []string) (Counts, error) {
	var c Counts
	hc := &http.Client{Timeout: metricsTimeout}
	defer hc.CloseIdleConnections()
	for _, ep := range endpoints {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ep+"/metrics", nil)
		if err != nil {
			return Counts{}, fmt.Errorf("etcd: %w", err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return Counts{}, fmt.Errorf("etcd: scraping %s: %w", ep, err)
		}
		m, err := parseMetrics(resp.Body)
		resp.Body.Close()
		if err != nil {
			return Counts{}, fmt.Errorf("etcd: scraping %s: %w", ep, err)
		}
		c.Commands += m.commands
		c.Attempts += m.txns
		c.Watches += m.watches
		c.KeepAlives += m.keepAlives
		c.Proposals = max(c.Proposals, m.proposals)
	}
	return c, nil
}

type memberCounts struct{ commands, txns, watches, keepAlives, proposals int64 }

// parseMetrics reads the series ReadCounts needs from a Prometheus text
// exposition.
func parseMetrics(r io.Reader) (memberCounts, error) {
	var m memberCounts
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, value, err := splitSample(line)
		if err != nil {
			return memberCounts{}, err
		}
		switch name {
		case MetricReceived:
			service := labelValue(labels, "grpc_service")
			if !strings.HasPrefix(service, "etcdserverpb.") || service == "etcdserverpb.Maintenance" {
				continue
			}
			m.commands += int64(value)
			switch labelValue(labels, "grpc_method") {
			case "Txn":
				m.txns += int64(value)
			case "Watch":
				m.watches += int64(value)
			case "LeaseKeepAlive":
				m.keepAlives += int64(value)
			}
		case MetricProposals:
			m.proposals = int64(value)
		}
	}
	return m, s.Err()
}

// splitSample splits `name{labels} value [timestamp]`.
func splitSample(line string) (name, labels string, value float64, err error) {
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", "", 0, fmt.Errorf("malformed metrics line %q", line)
		}
		name, labels, rest = line[:i], line[i+1:j], line[j+1:]
	} else {
		f := strings.Fields(line)
		if len(f) < 2 {
			return "", "", 0, fmt.Errorf("malformed metrics line %q", line)
		}
		name, rest = f[0], strings.Join(f[1:], " ")
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", "", 0, fmt.Errorf("malformed metrics line %q", line)
	}
	value, err = strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", "", 0, fmt.Errorf("metrics line %q: %w", line, err)
	}
	return name, labels, value, nil
}

// labelValue returns the value of label key in `a="x",b="y"` (values
// holding no quotes or commas, as gRPC and etcd labels do).
func labelValue(labels, key string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}
