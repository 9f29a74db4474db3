// Package serverops reads the coordinator's own view of the load a
// contender puts on it: the cumulative number of commands its servers have
// served (Redis: INFO commandstats; monolock: the /metrics counters of its
// ops port) and, for monolock, how many sessions are queued. Scenarios take
// deltas of these counters; the bench never estimates them from the client
// side.
package serverops

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
)

var (
	// ErrUnavailable is returned by New when the contender's coordinator
	// cannot be read (a role without counters, or a monolock server whose
	// ops port the deployment does not expose).
	ErrUnavailable = errors.New("serverops: coordinator counters unavailable")
	// ErrNoQueue is returned by Waiters for coordinators without a server
	// side queue (Redis: waiters poll).
	ErrNoQueue = errors.New("serverops: coordinator has no waiter queue")
)

// Monolock /metrics series: commands are ACQUIRE and HEARTBEAT frames.
const (
	metricAcquires   = "monolock_acquires_total"
	metricHeartbeats = "monolock_heartbeats_total"
	metricWaiters    = "monolock_waiters"
)

// requestTimeout bounds one read of the counters.
const requestTimeout = 5 * time.Second

// Probe reads the counters of one contender's servers. It is safe for
// concurrent use.
type Probe struct {
	source  string
	redis   []*redis.Client // Redis roles: one client per server
	metrics []string        // monolock: /metrics URLs
	http    *http.Client
}

// New returns a Probe for env's contender, chosen by its server role:
// bench.RoleRedis and bench.RoleRedlock read INFO commandstats on every
// server of the role; bench.RoleMonolock reads /metrics at the
// deployment's bench.RoleMonolockOps addresses. Other roles, or monolock
// without ops addresses, return an error wrapping ErrUnavailable.
func New(env *bench.Env) (*Probe, error) {
	switch role := env.Contender.Role; role {
	case bench.RoleRedis, bench.RoleRedlock:
		if len(env.Addrs) == 0 {
			return nil, fmt.Errorf("%w: no %s servers", ErrUnavailable, role)
		}
		p := &Probe{source: fmt.Sprintf("redis INFO commandstats, calls of every command but INFO, summed over %d server(s)", len(env.Addrs))}
		for _, a := range env.Addrs {
			p.redis = append(p.redis, redis.NewClient(&redis.Options{Addr: a, PoolSize: 1, DisableIdentity: true}))
		}
		return p, nil
	case bench.RoleMonolock:
		ops := env.Deployment.Addrs(bench.RoleMonolockOps)
		if len(ops) == 0 || ops[0] == "" {
			return nil, fmt.Errorf("%w: the deployment exposes no monolock ops address", ErrUnavailable)
		}
		p := &Probe{
			source: fmt.Sprintf("monolock /metrics: %s + %s", metricAcquires, metricHeartbeats),
			http:   &http.Client{Timeout: requestTimeout},
		}
		for _, a := range ops {
			p.metrics = append(p.metrics, "http://"+a+"/metrics")
		}
		return p, nil
	default:
		return nil, fmt.Errorf("%w: role %q", ErrUnavailable, role)
	}
}

// Source says what Commands counts, for results.json.
func (p *Probe) Source() string { return p.source }

// Counts are cumulative counters of a contender's servers.
type Counts struct {
	// Commands is every command served: Redis calls of every command but
	// INFO (which is how the Probe reads them); monolock ACQUIRE and
	// HEARTBEAT frames.
	Commands int64
	// Attempts are acquire attempts: Redis SET calls (SET NX is how both
	// Redis contenders try), monolock ACQUIRE frames.
	Attempts int64
}

// Counts returns the servers' counters summed over every server of the
// role.
func (p *Probe) Counts(ctx context.Context) (Counts, error) {
	var c Counts
	for _, r := range p.redis {
		info, err := r.Info(ctx, "commandstats").Result()
		if err != nil {
			return Counts{}, fmt.Errorf("serverops: INFO commandstats: %w", err)
		}
		calls, err := ParseCommandStats(info)
		if err != nil {
			return Counts{}, err
		}
		for cmd, n := range calls {
			if cmd != "info" {
				c.Commands += n
			}
		}
		c.Attempts += calls["set"]
	}
	for _, u := range p.metrics {
		m, err := p.scrape(ctx, u)
		if err != nil {
			return Counts{}, err
		}
		c.Commands += int64(m[metricAcquires] + m[metricHeartbeats])
		c.Attempts += int64(m[metricAcquires])
	}
	return c, nil
}

// Servers returns the number of servers the Probe reads: one attempt of a
// Redlock client reaches every master.
func (p *Probe) Servers() int { return len(p.redis) + len(p.metrics) }

// Waiters returns the number of sessions queued on the monolock servers
// (the monolock_waiters gauge), or ErrNoQueue for Redis.
func (p *Probe) Waiters(ctx context.Context) (int64, error) {
	if len(p.metrics) == 0 {
		return 0, ErrNoQueue
	}
	var sum int64
	for _, u := range p.metrics {
		m, err := p.scrape(ctx, u)
		if err != nil {
			return 0, err
		}
		sum += int64(m[metricWaiters])
	}
	return sum, nil
}

// Close closes the Probe's connections.
func (p *Probe) Close() error {
	var errs []error
	for _, c := range p.redis {
		errs = append(errs, c.Close())
	}
	if p.http != nil {
		p.http.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

func (p *Probe) scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("serverops: %w", err)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("serverops: scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("serverops: scraping %s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads the unlabelled samples of a Prometheus text exposition
// ("name value" lines); labelled samples and comments are skipped.
func ParseMetrics(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("serverops: malformed metrics line %q", line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("serverops: metrics line %q: %w", line, err)
		}
		m[f[0]] = v
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("serverops: reading metrics: %w", err)
	}
	return m, nil
}

// ParseCommandStats returns the calls per command ("set", "evalsha", ...)
// in the output of Redis INFO commandstats ("cmdstat_set:calls=12,...").
func ParseCommandStats(info string) (map[string]int64, error) {
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		name, fields, ok := strings.Cut(line, ":")
		cmd, isStat := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isStat {
			continue
		}
		found := false
		for kv := range strings.SplitSeq(fields, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("serverops: commandstats line %q: %w", line, err)
				}
				calls[cmd], found = n, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("serverops: commandstats line without calls: %q", line)
		}
	}
	return calls, nil
}
