package etcd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
// answer, or answers with another status than 200, is an error: take
// deltas only between reads of the same members.
func ReadCounts(ctx context.Context, endpoints []string) (Counts, error) {
	var c Counts
	hc := &http.Client{Timeout: metricsTimeout}
	defer hc.CloseIdleConnections()
	for _, ep := range endpoints {
		families, err := scrape(ctx, hc, "http://"+ep+"/metrics")
		if err != nil {
			return Counts{}, fmt.Errorf("etcd: scraping %s: %w", ep, err)
		}
		m, err := countsOf(families)
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

// scrape reads the Prometheus text exposition at url.
func scrape(ctx context.Context, hc *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

type memberCounts struct{ commands, txns, watches, keepAlives, proposals int64 }

// countsOf reads the series ReadCounts needs from one member's metric
// families. etcd exports MetricReceived as a counter and MetricProposals
// as a gauge; a missing MetricProposals is an error (every member exports
// it), a missing MetricReceived counts nothing (no call was served yet).
func countsOf(families map[string]*dto.MetricFamily) (memberCounts, error) {
	var m memberCounts
	for _, s := range families[MetricReceived].GetMetric() {
		service := labelValue(s, "grpc_service")
		if !strings.HasPrefix(service, "etcdserverpb.") || service == "etcdserverpb.Maintenance" {
			continue
		}
		v := int64(s.GetCounter().GetValue())
		m.commands += v
		switch labelValue(s, "grpc_method") {
		case "Txn":
			m.txns += v
		case "Watch":
			m.watches += v
		case "LeaseKeepAlive":
			m.keepAlives += v
		}
	}
	proposals := families[MetricProposals]
	if proposals.GetType() != dto.MetricType_GAUGE || len(proposals.GetMetric()) != 1 {
		return memberCounts{}, fmt.Errorf("no single gauge %s in the metrics", MetricProposals)
	}
	m.proposals = int64(proposals.GetMetric()[0].GetGauge().GetValue())
	return m, nil
}

// labelValue returns the value of the sample's label name, or "".
func labelValue(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
