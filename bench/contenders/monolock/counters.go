package monolock

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

	"github.com/monolock/monolock-bench/bench"
)

// The server's /metrics series the counters read: commands are ACQUIRE
// and HEARTBEAT frames; waiters are sessions queued for a lock. Every
// ACQUIRE arrives on a connection of its own, so accepted connections
// count ACQUIREs (monolock_acquires_total counts grants only).
const (
	metricConnections = "monolock_connections_accepted_total"
	metricHeartbeats  = "monolock_heartbeats_total"
	metricWaiters     = "monolock_waiters"
)

const countersSource = "server /metrics: commands = " + metricConnections + " (one ACQUIRE each) + " + metricHeartbeats +
	"; attempts = " + metricConnections + "; waiting = the " + metricWaiters + " gauge; keep-alives = " + metricHeartbeats

// scrapeTimeout bounds one read of /metrics.
const scrapeTimeout = 5 * time.Second

// counters reads the /metrics of the monolock servers.
type counters struct {
	urls []string
	http *http.Client
}

// NewCounters returns the coordinator counters of servers, read from
// /metrics on their ops ports; without an ops address the error wraps
// bench.ErrNoCounters.
func NewCounters(servers []bench.Server) (bench.Coordinator, error) {
	c := &counters{http: &http.Client{Timeout: scrapeTimeout}}
	for _, s := range servers {
		if s.OpsAddr() == "" {
			return nil, fmt.Errorf("%w: no ops address for %s", bench.ErrNoCounters, s.Name())
		}
		c.urls = append(c.urls, "http://"+s.OpsAddr()+"/metrics")
	}
	return c, nil
}

// Counts implements bench.Coordinator.
func (c *counters) Counts(ctx context.Context) (bench.Counts, error) {
	var n bench.Counts
	for _, u := range c.urls {
		m, err := c.scrape(ctx, u)
		if err != nil {
			return bench.Counts{}, err
		}
		connections, err1 := value(m, metricConnections, dto.MetricType_COUNTER)
		heartbeats, err2 := value(m, metricHeartbeats, dto.MetricType_COUNTER)
		waiters, err3 := value(m, metricWaiters, dto.MetricType_GAUGE)
		if err := errors.Join(err1, err2, err3); err != nil {
			return bench.Counts{}, fmt.Errorf("monolock: scraping %s: %w", u, err)
		}
		n.Commands += int64(connections + heartbeats)
		n.Attempts += int64(connections)
		n.Waiting += int64(waiters)
		n.KeepAlives += int64(heartbeats)
	}
	return n, nil
}

// Close implements bench.Coordinator.
func (c *counters) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// scrape reads the Prometheus text exposition at url.
func (c *counters) scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("monolock: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("monolock: scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("monolock: scraping %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("monolock: scraping %s: %w", url, err)
	}
	return m, nil
}

// value returns the sample of the unlabelled series name, which must be of
// type typ: a series the server no longer exports, or exports otherwise,
// is an error rather than a silent zero.
func value(families map[string]*dto.MetricFamily, name string, typ dto.MetricType) (float64, error) {
	f := families[name]
	if f == nil || f.GetType() != typ || len(f.GetMetric()) != 1 {
		return 0, fmt.Errorf("no single %s %s in the metrics", strings.ToLower(typ.String()), name)
	}
	if typ == dto.MetricType_GAUGE {
		return f.GetMetric()[0].GetGauge().GetValue(), nil
	}
	return f.GetMetric()[0].GetCounter().GetValue(), nil
}
