package scenarios

// The scale scenario's setup of one variant: open-file limits, fresh servers and the dialler.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	"github.com/monolock/monolock-bench/bench/load/spreaddial"
	"github.com/monolock/monolock-bench/bench/results"
)

// setup is what every scale variant prepares: limits, the port plan, the
// dialer, fresh servers and an open Locker.
type setup struct {
	c       int
	locker  bench.Locker
	probe   bench.Coordinator
	limits  []bench.FileLimits
	plan    spreaddial.Plan
	counts  map[string]int64
	notes   []string
	lease   time.Duration
	readers []bench.FootprintReader // nil when a server's memory is unreadable
}

func (s *setup) close() {
	if s.locker != nil {
		s.locker.Close()
	}
	if s.probe != nil {
		s.probe.Close()
	}
}

// errSkip carries the reason a variant is not measured for a contender.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

// skipped turns an errSkip into the record that says why; other errors
// stay errors.
func skipped(err error, counts map[string]int64) (results.Raw, error) {
	var s errSkip
	if errors.As(err, &s) {
		return results.Raw{Skipped: s.reason, Counts: counts}, nil
	}
	return results.Raw{}, err
}

// prepare checks the limits for c sessions (MaxSessions: as many as fit),
// plans the addresses, restarts the servers and opens the Locker.
func prepare(ctx context.Context, env *bench.Env, cfg ScaleConfig, c int, lease time.Duration) (*setup, error) {
	s := &setup{c: c, counts: map[string]int64{}, lease: lease}
	benchLimits, err := host.RaiseFileLimit()
	if err != nil {
		s.notes = append(s.notes, err.Error())
	}
	s.limits = append(s.limits, benchLimits)
	for _, srv := range env.Servers {
		lr, ok := srv.(bench.LimitReader)
		if !ok {
			continue
		}
		l, err := lr.FileLimits(ctx)
		if err != nil {
			s.notes = append(s.notes, fmt.Sprintf("open-file limit of %s unreadable: %v", srv.Name(), err))
			continue
		}
		s.limits = append(s.limits, l)
	}
	for i, l := range s.limits {
		k := "nofile_" + map[bool]string{true: "bench", false: "server" + strconv.Itoa(i)}[i == 0]
		s.counts[k+"_soft"], s.counts[k+"_hard"], s.counts[k+"_in_use"] = int64(l.Soft), int64(l.Hard), int64(l.InUse)
	}
	most := math.MaxInt
	for _, l := range s.limits {
		most = min(most, l.MaxSessions(1, sessions.DefaultReserve))
	}
	s.counts["max_sessions"] = int64(most)
	if c == MaxSessions {
		// As many as fit, but no more than the largest count asked for:
		// a machine without tight limits runs idle-max at that count.
		s.c = min(most, slices.Max(append([]int{1}, cfg.Idle...)))
	}
	for _, l := range s.limits {
		if err := l.Check(s.c, 1, sessions.DefaultReserve); err != nil {
			return s, errSkip{err.Error()}
		}
	}
	if most := env.Contender.MaxSessions; most > 0 && s.c > most {
		s.counts["max_sessions"] = int64(most)
		return s, errSkip{fmt.Sprintf("%d sessions exceed the %d sessions one %s Locker can have at once: %s", s.c, most, env.Contender.Name, env.Contender.MaxSessionsReason)}
	}
	s.counts["sessions"] = int64(s.c)
	// Restart before the Locker opens: a pool dialled before would hold
	// connections to the killed process.
	if cfg.reuse {
		s.notes = append(s.notes, "servers not restarted (quick run): the empty baseline is the server as the previous variant left it")
	} else if err := restart(ctx, env.Servers); errors.Is(err, bench.ErrNotSupported) {
		s.notes = append(s.notes, "servers not restarted: "+err.Error())
	} else if err != nil {
		return s, fmt.Errorf("restarting the servers for a fresh start: %w", err)
	}
	if err := s.dial(ctx, env, cfg); err != nil {
		return s, err
	}
	for _, srv := range env.Servers {
		r, ok := srv.(bench.FootprintReader)
		if !ok {
			s.readers = nil
			break
		}
		s.readers = append(s.readers, r)
	}
	if s.probe, err = openCoordinator(env); err != nil {
		return s, err
	}
	return s, nil
}

// restart kills servers and starts them again, all at once (five Redlock
// masters in parallel): a fresh process is all the scenario needs, and a
// kill spares the shutdown a server may stretch while clients are
// connected.
func restart(ctx context.Context, servers []bench.Server) error {
	return errors.Join(onEach(servers, func(s bench.Server) error {
		if err := s.Kill(ctx); err != nil {
			return err
		}
		return s.Restart(ctx)
	})...)
}

// dial plans the sessions' connections over address pairs and opens the
// Locker with a spreading Dialer when more than one pair is needed. A
// pair carries at most half its usable ports by default: Linux's
// connect() takes even ports first and scans every even port before it
// tries an odd one, so past half the range each connect to the same
// destination walks the whole even half. In the full run
// 20261207T191819Z the load generator's connects slowed to about 500 a
// second beyond 14,116 sessions (the even ports of 32768–60999), and
// monolock, whose every session is a connection, lost 11,524–13,822 of
// 19,734 at a 2s lease while its server idled. Where the backend cannot
// give a second pair (several servers), sessions that fit one pair's
// whole range run there, as before.
func (s *setup) dial(ctx context.Context, env *bench.Env, cfg ScaleConfig) error {
	ports, err := spreaddial.ReadPortRange()
	if err != nil {
		return err
	}
	perPair := cfg.ConnsPerPair
	if perPair <= 0 {
		perPair = ports.Usable() / 2
	}
	pairs := max(1, (s.c+perPair-1)/perPair)
	s.counts["port_range_low"], s.counts["port_range_high"] = int64(ports.Low), int64(ports.High)
	var d *spreaddial.Dialer
	if pairs > 1 {
		d, err = spreadFor(ctx, env, pairs)
		if err == nil && !env.Contender.Dials {
			err = errSkip{fmt.Sprintf("%d sessions need %d address pairs, and contender %s takes no dialer (Contender.Dials)", s.c, pairs, env.Contender.Name)}
		}
		var skip errSkip
		switch {
		case err != nil && cfg.ConnsPerPair <= 0 && s.c <= ports.Usable() && errors.As(err, &skip):
			// The sessions still fit one pair's whole range, only
			// dearer to connect: run them there, as a contender whose
			// sessions share a pool of connections does at no cost.
			d, pairs, perPair = nil, 1, ports.Usable()
		case err != nil:
			return err
		}
	}
	s.counts["conns_per_pair"], s.counts["address_pairs"] = int64(perPair), int64(pairs)
	s.plan = spreaddial.NewPlan(s.c, ports, d)
	s.counts["source_addresses"], s.counts["destination_addresses"] = int64(s.plan.Sources), int64(s.plan.Destinations)
	// The sessions stand for separate clients.
	o := bench.OpenOptions{SeparateClients: true}
	if d != nil {
		o.Dialer = d
	}
	s.locker, err = env.Contender.New(ctx, env.Addrs, s.lease, o)
	if err != nil {
		return fmt.Errorf("opening %s: %w", env.Contender.Name, err)
	}
	return nil
}

// spreadFor returns a Dialer over pairs address pairs to env's servers:
// loopback sources for servers on loopback, else extra destination
// addresses of a single server that can have them.
func spreadFor(ctx context.Context, env *bench.Env, pairs int) (*spreaddial.Dialer, error) {
	loopback := true
	for _, a := range env.Addrs {
		ap, err := netip.ParseAddrPort(a)
		loopback = loopback && err == nil && ap.Addr().IsLoopback()
	}
	if loopback {
		src, err := spreaddial.Loopback(pairs + 1)
		if err != nil {
			return nil, errSkip{err.Error()}
		}
		return &spreaddial.Dialer{Sources: src[1:], Timeout: 10 * time.Second}, nil
	}
	if len(env.Servers) != 1 {
		return nil, errSkip{fmt.Sprintf("%d connections per address pair are exceeded and %d servers cannot share extra destination addresses", pairs, len(env.Servers))}
	}
	mh, ok := env.Servers[0].(bench.Multihomed)
	if !ok {
		return nil, errSkip{fmt.Sprintf("the sessions need %d address pairs and the backend cannot give %s more addresses", pairs, env.Servers[0].Name())}
	}
	dst, err := mh.Destinations(ctx, pairs)
	if err != nil {
		return nil, fmt.Errorf("extra addresses for %s: %w", env.Servers[0].Name(), err)
	}
	return &spreaddial.Dialer{Destinations: dst, Timeout: 10 * time.Second}, nil
}
