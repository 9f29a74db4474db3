package monolock

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

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
		n.Commands += int64(m[metricConnections] + m[metricHeartbeats])
		n.Attempts += int64(m[metricConnections])
		n.Waiting += int64(m[metricWaiters])
		n.KeepAlives += int64(m[metricHeartbeats])
	}
	return n, nil
}

// Close implements bench.Coordinator.
func (c *counters) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

func (c *counters) scrape(ctx context.Context, url string) (map[string]float64, error) {
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
	return parseMetrics(resp.Body)
}

// parseMetrics reads the unlabelled samples of a Prometheus text
// exposition ("name value" lines); labelled samples and comments are
// skipped.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("monolock: malformed metrics line %q", line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("monolock: metrics line %q: %w", line, err)
		}
		m[f[0]] = v
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("monolock: reading metrics: %w", err)
	}
	return m, nil
}
