package scenarios

// primary-lost, primary-lost-fast and no-fence: the high-availability
// pattern of monolock's documentation, measured on a standby pair
// (bench.Contender.Standby): a primary and a passive standby, one address
// the clients know, and a failover mechanism that watches the primary's
// /readyz and moves the address.
//
// Where the servers run on emulated hosts (a network profile other than
// loopback, bench/network), the address is a virtual IP: an address of
// the emulated network that the primary's host carries on its link, moved
// to the standby's host link as keepalived moves its VRRP address. With
// the fence it is a takeover: every packet to it, of an old connection as
// of a new one, reaches the standby from then on, whose kernel resets a
// connection it never had, so each old session breaks at its next
// segment. Without it (no-fence) the established connections keep the old
// primary, as a load-balancer or DNS switch does. On loopback there are
// no hosts to move an address between: the address is the bench's TCP
// forwarder (bench/faults/addrmove), which with the fence cuts every
// established connection off the old primary at the move and resets it at
// the client's next segment, as the takeover does. Each record says which mechanism
// moved its address (its count address_move_virtual_ip or
// address_move_forwarder).
//
// primary-lost loses the primary's host: on an emulated host its link is
// cut (every packet to and from it dropped, SYNs included), and after the
// variant its address is taken back, its link healed and its server
// restarted empty. On loopback the bench cannot drop a process's packets,
// and a killed process's kernel would answer every client with a reset at
// once, which a lost host never sends: the primary is frozen instead
// (SIGSTOP: its sockets stay open and nothing answers). The watcher finds
// /readyz failing and moves the address with the fence; D is measured from
// the fault to the move, and the fault falls at a random phase of the
// watcher's checks, recorded, so that D shows its spread. primary-lost uses
// the docs' keepalived example (every 1 s, fall 2), primary-lost-fast every
// 100 ms, fall 2, so that D scales visibly. no-fence moves the address at
// the fault without the fence while the primary stays alive and serving:
// the two servers serve at once and grant the same names.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/addrmove"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
	"github.com/monolock/monolock-bench/bench/results"
)

// Standby variants.
const (
	FailoverPrimaryLost     = "primary-lost"
	FailoverPrimaryLostFast = "primary-lost-fast"
	FailoverNoFence         = "no-fence"
)

// The shared load of the standby variants, beside the steady workers:
// sharedWorkers clients on one name, each holding it sharedHold, and
// longWorkers clients on another name, each holding it until it learns it
// lost it (the holder across the fault and its waiter); all write to a
// fenced and an unfenced guarded store every writeEvery while they
// believe they hold their lock.
const (
	sharedWorkers = 4
	sharedHold    = 50 * time.Millisecond
	longWorkers   = 2
)

// standbyMinAfter is the least load after the move: a client whose SYN a
// lost host swallowed sends it again a second later (Linux's initial
// retransmission timeout), and the window must see that client come back.
const standbyMinAfter = 1500 * time.Millisecond

// standbyAfter is the load after the move: the scenario's, at least
// standbyMinAfter.
func standbyAfter(c FailoverConfig) time.Duration { return max(c.After, standbyMinAfter) }

// Skip reasons of the standby variants.
const (
	noStandby   = "no standby: not an active–passive pair; its failover figures are restart (and minority-down for a cluster)"
	standbyPair = "a standby pair: measured by primary-lost, primary-lost-fast and no-fence; a restart on the same address is its single server's row"
	noOps       = "the primary has no operations address: the failover watcher cannot read /readyz"
)

func skipUnlessStandby(c bench.Contender) string {
	if !c.Standby {
		return noStandby
	}
	return ""
}

func skipStandby(c bench.Contender) string {
	if c.Standby {
		return standbyPair
	}
	return ""
}

// standbyVariants are the variants of the standby pair.
func standbyVariants(c FailoverConfig) []bench.Variant {
	lost := func(name string, w watch) bench.Variant {
		return bench.Variant{
			Name: name, Params: results.VariantParams{Workers: c.Workers + sharedWorkers + longWorkers, Fault: results.FaultPrimaryLost},
			MaxRepetitions: failoverRepetitions, Skip: skipUnlessStandby,
			// The fault's random phase adds half an interval on average.
			Estimate: c.Before + w.interval/2 + w.expected() + standbyAfter(c) + restartCost/2,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				return runStandby(ctx, env, c, w, true)
			},
		}
	}
	return []bench.Variant{
		lost(FailoverPrimaryLost, keepalivedWatch),
		lost(FailoverPrimaryLostFast, fastWatch),
		{
			Name: FailoverNoFence, Params: results.VariantParams{Workers: c.Workers + sharedWorkers + longWorkers, Fault: results.FaultSwitchNoFence},
			MaxRepetitions: failoverRepetitions, Skip: skipUnlessStandby,
			Estimate: c.Before + standbyAfter(c) + restartCost/2,
			Run: func(ctx context.Context, env *bench.Env) (results.Raw, error) {
				return runStandby(ctx, env, c, watch{}, false)
			},
		},
	}
}

// standbySettings describe the standby variants for results.json.
func standbySettings() results.Settings {
	return results.Settings{
		"standby_address": "where the servers run on emulated hosts (a network profile other than loopback): a virtual IP of the emulated network, carried by the primary's host link and moved to the standby's host link (the delay line delivers it to its holder); with the fence a takeover (the old primary loses the address, every packet to it reaches the standby, whose kernel resets each old connection at its next segment), without it the connections open before the move keep the old primary (a load-balancer or DNS switch). On loopback: a TCP forwarder of the bench (bench/faults/addrmove) at the one address the clients dial, which switches new connections to the standby and, with the fence, cuts every established one off the old primary at the move and resets it at the client's next segment; it is not an address move. Each record's count address_move_virtual_ip or address_move_forwarder says which ran",
		"standby_watch":   FailoverPrimaryLost + ": " + keepalivedWatch.String() + " (the docs' keepalived example); " + FailoverPrimaryLostFast + ": " + fastWatch.String() + "; the fault falls at a uniformly random phase of the checks (fault_phase_ms: from the start of the last check to the fault), so D spans about fall to fall+1 intervals across repetitions",
		"standby_fault":   FailoverPrimaryLost + ", " + FailoverPrimaryLostFast + ": the primary's host lost: on an emulated host its link cut (every packet dropped; count primary_link_cut), then after the variant the address taken back, the link healed and the server restarted empty; on loopback, where no link can be cut and a killed process's kernel would reset every client at once (a lost host sends nothing), the primary frozen (SIGSTOP: sockets open, nothing answers; count primary_frozen) and thawed after the variant; D (detection_ms) from the fault in effect (the cut or the freeze returned; fault_took_ms: how long making it took) to the move; " + FailoverNoFence + ": the address moved at the fault without the fence, the primary alive and serving its established sessions (a DNS or load-balancer switch)",
		"standby_load":    fmt.Sprintf("the steady workers (the restart figures) plus %d clients on one name holding it %v, and %d on another each holding it until it learns the loss (holder_stop_ms: the first such loss after the fault, by its own 0.8 × lease timer or by the reset the move caused, whichever came first); all write to a fenced and an unfenced guarded store every %v while they believe they hold the lock; double grants and stale writes by guardedstore.Analyze; owner_writes_rejected: writes of a client no later grant had superseded that the fenced store rejected for a lower token (the tokens went backwards)", sharedWorkers, sharedHold, longWorkers, writeEvery),
		"standby_servers": "grants_dialled_before_move: grants after the move of acquires whose client dialled before it (one connection per acquire; without the fence these are the old primary's grants on its established sessions, with it only acquires whose dial raced the move); grants_dialled_after_move: the standby's",
		"standby_after":   fmt.Sprintf("the load after the move lasts the scenario's after, at least %v: a client whose SYN the lost host swallowed sends it again a second later, and the window must see it come back", standbyMinAfter),
		"standby_clock":   "both servers run on the same host clock here, so the docs' NTP requirement holds exactly; on two machines the standby's clock must not be behind the primary's. The docs promise tokens above every earlier one only when the standby takes over more than a second after the primary's last grant (takeover_ms, as the clients saw the two grants; tokens_monotonic, token_gap and takeover_ms read every grant of the steady and the shared loads); tokens_promise_broken is recorded only for such a repetition (1: a token after the move at or below one before)",
	}
}

// sharedLoad is the shared name and the long holder of a standby variant:
// their grants and the two stores they write to.
type sharedLoad struct {
	fenced, unfenced *guardedstore.Store

	mu     sync.Mutex
	grants []guardedstore.Grant
	events []grantEvent
	fails  int
	// longLost are the moments the long holders learned they lost
	// their lock.
	longLost []time.Time
}

func newSharedLoad() *sharedLoad {
	return &sharedLoad{fenced: guardedstore.NewStore(true), unfenced: guardedstore.NewStore(false)}
}

// worker acquires key as client, retrying with the steady workers'
// backoff, holds it for hold (0: until it learns it lost it) while
// writing to both stores, and releases it, until ctx ends.
func (s *sharedLoad) worker(ctx context.Context, l bench.Locker, client, key string, hold, lease time.Duration) {
	delay := retryMin
	for ctx.Err() == nil {
		ev := grantEvent{attempt: time.Now()}
		actx, cancel := context.WithTimeout(ctx, lease)
		h, err := l.Acquire(actx, key)
		cancel()
		if ctx.Err() != nil {
			if h != nil {
				_ = h.Release(context.WithoutCancel(ctx))
			}
			return
		}
		if err != nil {
			s.mu.Lock()
			s.fails++
			s.mu.Unlock()
			if bench.Sleep(ctx, delay/2+mrand.N(delay/2+1)) != nil {
				return
			}
			delay = min(2*delay, retryMax)
			continue
		}
		delay = retryMin
		ev.at = time.Now()
		g := guardedstore.Grant{Client: client, Lock: key, At: check.Now()}
		if tok, ok := h.Token(); ok {
			g.Token = &tok
		}
		lost := s.hold(ctx, h, guardedstore.Write{Client: client, Lock: key, Token: g.Token}, hold)
		g.End = check.Now()
		lostAt := time.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease)
		_ = h.Release(rctx)
		cancel()
		s.mu.Lock()
		s.grants = append(s.grants, g)
		s.events = append(s.events, ev)
		if hold == 0 && lost {
			s.longLost = append(s.longLost, lostAt)
		}
		s.mu.Unlock()
	}
}

// hold writes w to both stores every writeEvery while h is held, for
// hold (0: until lost), and reports whether h was lost.
func (s *sharedLoad) hold(ctx context.Context, h bench.Held, w guardedstore.Write, hold time.Duration) bool {
	var end <-chan time.Time
	if hold > 0 {
		t := time.NewTimer(hold)
		defer t.Stop()
		end = t.C
	}
	tick := time.NewTicker(writeEvery)
	defer tick.Stop()
	for {
		s.fenced.Apply(w)
		s.unfenced.Apply(w)
		select {
		case <-h.Lost():
			return true
		case <-end:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// The two mechanisms that move the pair's one address.
const (
	// mechanismVirtualIP: an address of the emulated network, moved from
	// the primary's host link to the standby's (bench.VirtualIP).
	mechanismVirtualIP = "virtual_ip"
	// mechanismForwarder: the bench's TCP forwarder on loopback
	// (bench/faults/addrmove), where no emulated network is in use.
	mechanismForwarder = "forwarder"
)

// standbyAddress is the one address of a pair that the clients dial, and
// how the failover moves it.
type standbyAddress struct {
	addr      string
	mechanism string
	// move moves the address to the standby: with the fence the old
	// primary loses it (a virtual IP taken over), without it the old
	// primary keeps its established connections.
	move  func(fence bool) error
	close func()
}

// openStandbyAddress gives the pair its one address: a virtual IP held by
// the primary's host where the servers run on emulated hosts, the bench's
// forwarder to the primary on loopback.
func openStandbyAddress(primary, standby bench.Server) (standbyAddress, error) {
	if vs, ok := primary.(bench.VirtualIPServer); ok {
		vip, err := vs.VirtualIP()
		switch {
		case err == nil:
			p, perr := netip.ParseAddrPort(primary.Addr())
			s, serr := netip.ParseAddrPort(standby.Addr())
			if perr != nil || serr != nil || p.Port() != s.Port() {
				vip.Close()
				return standbyAddress{}, fmt.Errorf("failover: a virtual IP needs the primary (%s) and the standby (%s) on one port of their hosts", primary.Addr(), standby.Addr())
			}
			var once sync.Once
			return standbyAddress{
				addr:      netip.AddrPortFrom(vip.IP(), p.Port()).String(),
				mechanism: mechanismVirtualIP,
				move:      func(fence bool) error { return vip.Move(s.Addr(), !fence) },
				close:     func() { once.Do(func() { _ = vip.Close() }) },
			}, nil
		case !errors.Is(err, bench.ErrNotSupported):
			return standbyAddress{}, fmt.Errorf("failover: a virtual IP on %s's host: %w", primary.Name(), err)
		}
	}
	mover, err := addrmove.Listen(primary.Addr())
	if err != nil {
		return standbyAddress{}, err
	}
	return standbyAddress{
		addr:      mover.Addr(),
		mechanism: mechanismForwarder,
		move:      func(fence bool) error { mover.Move(standby.Addr(), fence); return nil },
		close:     func() { _ = mover.Close() },
	}, nil
}

// loseHost takes the primary's host away: its link cut (every packet to
// and from it dropped) where it has one, frozen on loopback. It returns
// how the fault was made and what brings the primary back for the next
// variant: a cut host's address taken back first (so that it cannot
// answer at it), its link healed and its server restarted empty, as a
// lost host comes back; a frozen one thawed.
func loseHost(ctx context.Context, primary bench.Server, addr standbyAddress) (how string, undo func(), err error) {
	if addr.mechanism == mechanismVirtualIP {
		if err := primary.Cut(ctx); err != nil {
			return "", nil, err
		}
		return "primary_link_cut", func() {
			ctx := context.WithoutCancel(ctx)
			addr.close()
			_ = primary.Restore(ctx)
			_ = primary.Restart(ctx)
		}, nil
	}
	if err := primary.Pause(ctx); err != nil {
		return "", nil, err
	}
	return "primary_frozen", func() { _ = primary.Unpause(context.WithoutCancel(ctx)) }, nil
}

// runStandby runs one standby variant: with fence, primary-lost (the
// primary's host lost, the watcher moving the address with the fence);
// without, no-fence.
func runStandby(ctx context.Context, env *bench.Env, cfg FailoverConfig, w watch, fence bool) (results.Raw, error) {
	if !env.Contender.Standby || len(env.Servers) != 2 {
		return results.Raw{Skipped: noStandby}, nil
	}
	primary, standby := env.Servers[0], env.Servers[1]
	if fence && primary.OpsAddr() == "" {
		return results.Raw{Skipped: noOps}, nil
	}
	addr, err := openStandbyAddress(primary, standby)
	if err != nil {
		return results.Raw{}, err
	}
	defer addr.close()
	l, err := env.Contender.Open(ctx, []string{addr.addr}, env.Lease)
	if err != nil {
		return results.Raw{}, fmt.Errorf("failover: opening %s: %w", env.Contender.Name, err)
	}
	defer l.Close()

	tl := &timeline{counts: map[string]int64{}}
	sh := newSharedLoad()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var ft faultTimes
	ft.start = time.Now()
	for i := range cfg.Workers {
		wg.Go(func() { steadyWorker(lctx, l, DistinctKey(i), cfg.Hold, env.Lease, tl) })
	}
	shared := "standby-shared-" + randomHex()
	for i := range sharedWorkers {
		wg.Go(func() { sh.worker(lctx, l, fmt.Sprintf("shared-%d", i), shared, sharedHold, env.Lease) })
	}
	long := "standby-long-" + randomHex()
	for i := range longWorkers {
		wg.Go(func() { sh.worker(lctx, l, fmt.Sprintf("long-%d", i), long, 0, env.Lease) })
	}
	stopLoad := func() {
		stop()
		wg.Wait()
		ft.end = time.Now()
	}
	defer stopLoad()

	// The watcher runs from the start of the load, as keepalived does;
	// it is joined before any return, so that it never moves a closed
	// address.
	var (
		checks  checkLog
		movedAt time.Time
		moveErr error
	)
	moved := make(chan struct{})
	wctx, wstop := context.WithCancel(ctx)
	var watcher sync.WaitGroup
	defer func() { wstop(); watcher.Wait() }()
	if fence {
		check := readyCheck(primary.OpsAddr())
		watcher.Go(func() {
			w.run(wctx, check, checks.add, func() {
				moveErr = addr.move(true)
				movedAt = time.Now()
				close(moved)
			})
		})
	}

	// The fault falls at a random phase of the watcher's checks, so that
	// D shows its spread across repetitions (fault_phase_ms records it).
	before := cfg.Before
	if fence {
		before += mrand.N(w.interval)
	}
	if err := bench.Sleep(ctx, before); err != nil {
		return results.Raw{}, err
	}
	select {
	case <-moved:
		return results.Raw{}, fmt.Errorf("failover: the watcher moved the address before the fault (%s failed under the load alone)", w)
	default:
	}
	ft.fault = time.Now()
	var how string
	if fence {
		var undo func()
		how, undo, err = loseHost(ctx, primary, addr)
		ft.faultDone = time.Now()
		if errors.Is(err, bench.ErrNotSupported) {
			return results.Raw{Skipped: fmt.Sprintf(cannotFaultFmt, err)}, nil
		}
		if err != nil {
			return results.Raw{}, fmt.Errorf("failover: losing the primary's host: %w", err)
		}
		defer undo()
		// Generous: every check of the fall timing out, twice over, and a
		// lease.
		limit := 2*time.Duration(2*w.fall+1)*w.interval + env.Lease
		select {
		case <-moved:
		case <-time.After(limit):
			return results.Raw{}, fmt.Errorf("failover: no move within %v of losing the primary (%s)", limit, w)
		case <-ctx.Done():
			return results.Raw{}, ctx.Err()
		}
	} else {
		ft.faultDone = ft.fault
		moveErr = addr.move(false)
		movedAt = time.Now()
	}
	if moveErr != nil {
		return results.Raw{}, fmt.Errorf("failover: moving the address (%s): %w", addr.mechanism, moveErr)
	}
	// The move is this pattern's "restart": the figures after it read as
	// the restart's do.
	ft.restart, ft.up = movedAt, movedAt
	if err := bench.Sleep(ctx, standbyAfter(cfg)); err != nil {
		return results.Raw{}, err
	}
	stopLoad()
	wstop()
	watcher.Wait()
	raw := standbyRaw(tl, sh, ft, env.Lease, fence)
	raw.Counts["address_move_"+addr.mechanism] = 1
	if fence {
		raw.Counts[how] = 1
		if phase, ok := checks.phase(ft.faultDone); ok {
			raw.Metrics = append(raw.Metrics, results.FailoverMetrics.FaultPhaseMs.Of(ms(phase)))
		}
	}
	return raw, nil
}
