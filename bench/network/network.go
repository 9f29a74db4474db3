package network

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by New when this machine or process cannot
// emulate a network; the message says what is missing.
var ErrUnavailable = errors.New("network: emulated network unavailable")

// ErrClosed is returned by the methods of a closed Network or Host.
var ErrClosed = errors.New("network: closed")

// Options configure a Network.
type Options struct {
	// Prefix starts the name of every namespace, device and lock file the
	// network creates; default DefaultPrefix ("mlb-"). Up to 8 characters
	// of a-z, 0-9 and '-', not starting or ending with a digit.
	Prefix string
	// Profile is every host's link unless Hosts or HostOptions say
	// otherwise. It must not be Loopback (which has no network to make).
	Profile Profile
	// Hosts overrides Profile for the hosts of these names (ParseOverride
	// reads them), e.g. two of five Redlock masters in a farther zone.
	Hosts map[string]Profile
	// Seed seeds the line's loss and jitter draws; 0 picks one at random.
	Seed uint64
	// QueueLimit is how many packets the line holds at most (beyond it
	// new ones are dropped and counted); default 8192.
	QueueLimit int
	// Spin, when positive, makes the line busy-wait for a packet due
	// within Spin instead of sleeping until it: sharper holds for a
	// core's worth of CPU while packets are in flight. Default 0: the
	// line sleeps and wakes ahead of each due time by its measured
	// wake-up latency.
	Spin time.Duration
	// NoRealTime keeps the line's thread at normal priority. By default
	// it runs under SCHED_FIFO (priority 1, where permitted), so that a
	// busy machine cannot keep packets waiting for a CPU; its CPU time is
	// the same either way, it just gets it first. Spin implies
	// NoRealTime: a real-time thread must not busy-wait.
	NoRealTime bool
	// CalibrationSamples is the number of round trips measured at New
	// for the line's own cost, per path, and at most per round of a
	// Compensation; default 300.
	CalibrationSamples int
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Calibration is the line's own cost at a 0 ms profile, measured by New:
// TCP round trips and connects on the direct path (127.0.0.1 in the
// bench's namespace) and through a link that holds nothing.
type Calibration struct {
	Direct, ZeroLine               Spread
	DirectConnect, ZeroLineConnect Spread
	// OwnRTT is ZeroLine.P50 − Direct.P50 (at least 0): the round trip
	// the line itself adds when nothing waits, its ends kept busy by
	// back-to-back round trips. It is the smallest RTT a profile may ask
	// (rtt=0 aside, which adds just OwnRTT). What the line subtracts from
	// an asked RTT is measured apart, per RTT (Compensation).
	OwnRTT time.Duration
}

// Compensation is what the line subtracts from one asked RTT so that a
// TCP round trip through a link of that RTT takes the RTT at the median.
// Through a link that holds packets, both ends of a round trip and the
// line itself go idle while a packet waits, and each wake-up costs more
// the longer the idle: on a 2-core VM about 15 µs after 0.5 ms, 30 µs
// after 2.5 ms and 50–60 µs after 15 ms, for the line on a packet's
// arrival and for the receiver on its delivery, plus the line's write
// (the receiver's TCP processing runs in it). A round trip back to back
// through a link that holds nothing (Calibration.OwnRTT) pays none of
// these wake-ups, so it cannot stand for them; instead New measures
// round trips through a link holding the RTT itself.
type Compensation struct {
	// RTT is the asked round trip.
	RTT time.Duration
	// Uncompensated are TCP round trips (ping-pong of 16 bytes, between
	// two idle ends) through a link holding RTT/2 each way: what the
	// line would give without compensation.
	Uncompensated Spread
	// Excess is the spread over the rounds of their round trips' p50 less
	// the hold they measured at (each round at the hold the least excess
	// of the ones before gave).
	Excess Spread
	// Subtracted is RTT less the hold the line applies (both ways
	// together, before jitter): the least Excess, within [0, RTT]. A
	// round trip between busy ends, which wake up faster, can take less
	// than RTT by up to Subtracted.
	Subtracted time.Duration
}

// Network is a set of emulated hosts, each in a network namespace of its
// own (or a container's), joined to the bench through a userspace delay
// line. The bench stays in its own namespace and reaches every host at
// its address; hosts reach each other through the line as well. Its
// methods are safe for concurrent use.
type Network struct {
	opts   Options
	prefix string
	run    int
	lock   *runLock
	line   *lineProcess
	log    *slog.Logger
	calib  Calibration
	stopAt func() bool // stops the context's AfterFunc

	compMu sync.Mutex // serialises compensations: they share the calibration host
	comps  map[time.Duration]Compensation

	mu     sync.Mutex
	hosts  [maxHosts + 1]*Host // by index; 0 is the bench
	byName map[string]*Host
	zero   *Host // the calibration host
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// New builds an empty network: it sweeps stale objects of killed runs
// with the same prefix, takes a free subnet, starts the line and
// measures the line's own cost. The network closes itself when ctx is
// done; call Close in any case.
func New(ctx context.Context, opts Options) (*Network, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.Profile.IsLoopback() {
		return nil, errors.New("network: the loopback profile has no emulated network; do not create one")
	}
	if opts.QueueLimit <= 0 {
		opts.QueueLimit = 8192
	}
	if opts.CalibrationSamples <= 0 {
		opts.CalibrationSamples = 300
	}
	if opts.Seed == 0 {
		opts.Seed = rand.Uint64()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := checkHost(); err != nil {
		return nil, err
	}
	n := &Network{opts: opts, prefix: opts.Prefix, log: opts.Logger, byName: map[string]*Host{},
		comps: map[time.Duration]Compensation{}}
	if removed, err := Sweep(opts.Prefix); err != nil {
		return nil, err
	} else if len(removed) > 0 {
		n.log.Info("network: removed what killed runs left", "objects", removed)
	}
	if err := n.claimSubnet(); err != nil {
		return nil, err
	}
	if err := n.setUp(ctx); err != nil {
		n.Close()
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { n.Close() })
	n.mu.Lock()
	n.stopAt = stop
	n.mu.Unlock()
	return n, nil
}

func subnetOf(run int) [3]byte {
	a := runAddr(run, 0).As4()
	return [3]byte{a[0], a[1], a[2]}
}

// claimSubnet takes a subnet, starts the line and routes the subnet to it
// through the bench's device. It holds the range lock from the check that
// nobody routes the subnet until its route exists: networks of every
// prefix, in every process, check the same routes, and a check made
// between another's check and its route would see the subnet free.
func (n *Network) claimSubnet() error {
	unlock, err := lockRange()
	if err != nil {
		return err
	}
	defer unlock()
	if err := n.takeSubnet(); err != nil {
		return err
	}
	n.line, err = startLine(n.lock, lineConfig{Subnet: subnetOf(n.run), Seed: n.opts.Seed,
		QueueLimit: n.opts.QueueLimit, Spin: int64(n.opts.Spin), RealTime: !n.opts.NoRealTime && n.opts.Spin == 0})
	if err != nil {
		n.lock.release()
		return err
	}
	if err := n.linkBench(); err != nil {
		n.Close()
		return err
	}
	return nil
}

// takeSubnet locks the first free run slot whose subnet nobody routes;
// the caller holds the range lock.
func (n *Network) takeSubnet() error {
	for k := range runSlots {
		l, err := tryLock(n.prefix, k)
		if errors.Is(err, errBusy) {
			continue
		}
		if err != nil {
			return err
		}
		inUse, err := subnetInUse(k)
		if err != nil || inUse {
			l.release()
			if err != nil {
				return err
			}
			continue
		}
		if _, err := sweepRun(n.prefix, k, n.log); err != nil {
			l.release()
			return err
		}
		n.run, n.lock = k, l
		return nil
	}
	return fmt.Errorf("network: all %d subnets of 198.18.0.0/15 are in use", runSlots)
}

// linkBench creates the bench's device, which routes the run's subnet,
// and hands it to the line.
func (n *Network) linkBench() error {
	sources := n.BenchSources()
	fd, err := newBenchTUN(benchLinkName(n.prefix, n.run), n.BenchIP(), sources[1:])
	if err != nil {
		return err
	}
	_, err = n.line.call(request{Op: "link", Index: 0}, fd)
	unix.Close(fd)
	return err
}

// setUp measures the line's own cost, and what it subtracts from the
// RTTs of the profiles it was given.
func (n *Network) setUp(ctx context.Context) error {
	var err error
	n.zero, err = n.addHost(ctx, "calibration", Profile{}, calibrationHost)
	if err != nil {
		return err
	}
	if err := n.calibrate(ctx); err != nil {
		return err
	}
	profiles := []Profile{n.opts.Profile}
	for _, p := range n.opts.Hosts {
		profiles = append(profiles, p)
	}
	for _, p := range profiles {
		if _, err := n.params(ctx, p); err != nil {
			return fmt.Errorf("network: profile %s: %w", p, err)
		}
	}
	return nil
}

// BenchIP returns the bench's address on the network: the source of its
// clients' connections.
func (n *Network) BenchIP() netip.Addr { return runAddr(n.run, 1) }

// BenchSources returns every address of the bench on the network,
// BenchIP first: 64 addresses to spread its clients' connections over
// (spreaddial.Dialer's Sources), so that many short connections do not
// run out of ephemeral ports. Off loopback the kernel's default
// (net.ipv4.tcp_tw_reuse = 2) does not reuse a port in TIME_WAIT, so one
// source address allows about 28k connections per minute to one server
// port; 64 allow about 30k a second.
func (n *Network) BenchSources() []netip.Addr {
	addrs := []netip.Addr{n.BenchIP()}
	for i := benchSourcesFrom; i <= 254; i++ {
		addrs = append(addrs, runAddr(n.run, i))
	}
	return addrs
}

// Subnet returns the /24 the network's addresses are taken from.
func (n *Network) Subnet() netip.Prefix { return netip.PrefixFrom(runAddr(n.run, 0), 24) }

// Profile returns the network's default profile.
func (n *Network) Profile() Profile { return n.opts.Profile }

// Calibration returns the line's own cost as measured by New.
func (n *Network) Calibration() Calibration { return n.calib }

// Compensation returns what the line subtracts from the asked RTT rtt, as
// measured for the first host of that RTT (New measures it for the
// network's profile and its overrides); false if no host asked it.
func (n *Network) Compensation(rtt time.Duration) (Compensation, bool) {
	n.compMu.Lock()
	defer n.compMu.Unlock()
	c, ok := n.comps[rtt]
	return c, ok
}

// Floor is the least a round trip through a link of profile p can take
// at the median's hold and jitter's extreme: each packet is held RTT/2
// less half the Compensation less Jitter/2, and may leave up to 200 µs
// early (the line's largest wake-up lead). A round trip or connect
// measured below it means the line sent packets before their time.
func (n *Network) Floor(p Profile) time.Duration {
	c, _ := n.Compensation(p.RTT)
	return p.RTT - c.Subtracted - p.Jitter - 2*maxLead
}

// HostOptions configure one host.
type HostOptions struct {
	// Profile, when set, is the host's link; default the network's
	// Options.Hosts entry for the name, else Options.Profile.
	Profile *Profile
}

// params turns a profile into what the line applies: each direction
// holds half the asked RTT less half its Compensation, measured on the
// first use of the RTT.
func (n *Network) params(ctx context.Context, p Profile) (linkParams, error) {
	own := n.calib.OwnRTT
	if p.RTT > 0 && p.RTT < own {
		return linkParams{}, fmt.Errorf("profile %s asks an RTT below the line's own round trip of %v (measured at start): the smallest RTT it can emulate; use loopback below it", p, own.Round(time.Microsecond))
	}
	var c Compensation
	if p.RTT > 0 {
		var err error
		if c, err = n.compensate(ctx, p.RTT); err != nil {
			return linkParams{}, err
		}
	}
	hold := (p.RTT - c.Subtracted) / 2
	return linkParams{RTT: int64(p.RTT), Hold: int64(hold), Jitter: int64(p.Jitter), Loss: p.Loss, Rate: p.Rate}, nil
}

func (n *Network) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}

// Close removes every host (its namespace, its link), stops the line and
// frees the subnet. Processes still running in a host's namespace keep
// it alive, unnamed and unreachable, until they exit: stop them first.
// Close is safe to call more than once and concurrently; every call
// returns once the network is gone.
func (n *Network) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

func (n *Network) close() error {
	n.mu.Lock()
	n.closed = true
	stopAt := n.stopAt
	var hosts []*Host
	for _, h := range n.hosts {
		if h != nil {
			hosts = append(hosts, h)
		}
	}
	n.mu.Unlock()
	if stopAt != nil {
		stopAt()
	}
	var errs []error
	n.line.stop() // its devices vanish with it
	for _, h := range hosts {
		errs = append(errs, h.tearDown())
	}
	n.lock.release()
	return errors.Join(errs...)
}
