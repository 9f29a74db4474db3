package redisbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
)

const countersSource = "INFO commandstats of every server: commands = calls of every command but INFO (which is how they are read); " +
	"attempts = SET calls / servers (one attempt reaches every master); waiting = attempts (waiters poll); " +
	"keep-alives = PEXPIRE calls (Redis 7 counts the commands a script runs: the watchdog's extension script runs one PEXPIRE per extension, and nothing else does)"

// NewCounters returns the coordinator counters of servers for the SET NX
// locks (redis, redlock): see countersSource.
func NewCounters(servers []bench.Server) (bench.Coordinator, error) {
	return CommandCounters(servers, func(calls map[string]int64, servers int) bench.Counts {
		attempts := calls["set"] / int64(servers)
		return bench.Counts{Attempts: attempts, Waiting: attempts, KeepAlives: calls["pexpire"]}
	})
}

// CountFunc derives a contender's counters from the calls per command
// ("set", "evalsha", ...) summed over its servers, of which there are
// servers. It fills Attempts, Waiting and KeepAlives; Commands is every
// call but INFO's, for every Redis contender alike.
type CountFunc func(calls map[string]int64, servers int) bench.Counts

// CommandCounters returns coordinator counters that read INFO
// commandstats on every server and derive bench.Counts from the calls by
// count. Redis 7 counts the commands a script runs too, so a contender
// can tell its scripts apart by a command only one of them runs.
func CommandCounters(servers []bench.Server, count CountFunc) (bench.Coordinator, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no servers", bench.ErrNoCounters)
	}
	c := &counters{count: count}
	for _, s := range servers {
		c.clients = append(c.clients, NewClientWith(s.Addr(), 1, probeTimeouts))
	}
	return c, nil
}

// counters reads INFO commandstats on every server of a contender.
type counters struct {
	clients []*redis.Client
	count   CountFunc
}

// Counts implements bench.Coordinator.
func (c *counters) Counts(ctx context.Context) (bench.Counts, error) {
	sum := map[string]int64{}
	for _, r := range c.clients {
		info, err := r.Info(ctx, "commandstats").Result()
		if err != nil {
			return bench.Counts{}, fmt.Errorf("redisbench: INFO commandstats: %w", err)
		}
		calls, err := parseCommandStats(info)
		if err != nil {
			return bench.Counts{}, err
		}
		for cmd, k := range calls {
			sum[cmd] += k
		}
	}
	n := c.count(sum, len(c.clients))
	n.Commands = 0 // every call but INFO's, whatever count filled in
	for cmd, k := range sum {
		if cmd != "info" {
			n.Commands += k
		}
	}
	return n, nil
}

// Close implements bench.Coordinator.
func (c *counters) Close() error {
	var errs []error
	for _, r := range c.clients {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// parseCommandStats returns the calls per command ("set", "evalsha", ...)
// in the output of INFO commandstats ("cmdstat_set:calls=12,...").
func parseCommandStats(info string) (map[string]int64, error) {
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
					return nil, fmt.Errorf("redisbench: commandstats line %q: %w", line, err)
				}
				calls[cmd], found = n, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("redisbench: commandstats line without calls: %q", line)
		}
	}
	return calls, nil
}
