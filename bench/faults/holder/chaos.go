package holder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/check"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
)

// The chaos client: a holder child in chaos mode (`monolock-bench holder
// -mode chaos ...`) loops on one lock until its stdin reaches EOF or it
// gets SIGTERM, and records every operation into its own history file
// (package check): acquire; then, under the lock, on the fenced store and
// then the unfenced one, read the register, write "<client>-<n>" to it and
// increment the counter (read it, then write it back plus one); then
// release. Every store operation carries the grant's token when the
// contender has one (the fenced store decides with it; a contender
// without tokens sends none and the fenced store rejects it). The client
// checks Lost before each operation and, in an increment, again between
// its read and its write, as a careful user does, and stops its work
// under the lock once it is closed (an increment that finds it closed
// before its write fails without sending it); a watcher records the lost
// notice, but only before release is invoked. Hold times are drawn from
// 0.1–0.3 of the lease, one in five from 1–2 leases instead (kept by the
// lock's keep-alive), seeded per client.
//
// Outcomes: a store answer is ok; a store refusal, a rejected read (a
// fenced store's stale or missing token) or an acquire that gave up is
// fail; a timeout or a broken connection is info (a deadline passing
// while the process was frozen by SIGSTOP included: the request may have
// arrived).

// Lines of a chaos child on its stdout: "ready" first (it records and
// runs), then "held" once each grant is recorded and "free" when it stops
// believing it holds the lock (before it invokes release, or at the lost
// notice), so that the bench can aim client faults at the holder
// (Process.Follow).
const (
	lineReady = "ready"
	lineFree  = "free"
)

// Timing of a chaos client, in leases.
const (
	// chaosHoldMin and chaosHoldMax bound the time a client keeps the
	// lock, its store operations spread over it.
	chaosHoldMin, chaosHoldMax = 0.1, 0.3
	// chaosLongShare of the holds are long instead, chaosLongMin to
	// chaosLongMax leases, kept by the lock's own keep-alive (heartbeats,
	// watchdog, session): a critical section a host loss or a partition
	// can outlast the lease in, which a short hold ends before any lease
	// runs out.
	chaosLongShare             = 0.2
	chaosLongMin, chaosLongMax = 1.0, 2.0
	// chaosThinkMin and chaosThinkMax bound the pause after a release or a
	// failed acquire, so that other clients get the lock between.
	chaosThinkMin, chaosThinkMax = 0.05, 0.15
	// chaosAcquireLeases bounds one acquire (plus a second): far longer
	// than any fault keeps a lock away; an acquire still waiting then is
	// recorded as info and tried again.
	chaosAcquireLeases = 10
)

// Timeouts of a chaos client's requests.
const (
	// chaosStoreTimeout bounds one request to a guarded store (in the
	// bench on loopback: milliseconds, unless the client was frozen).
	chaosStoreTimeout = 2 * time.Second
	// chaosReleaseTimeout bounds a release: a client cut off from its
	// servers cannot release, and its next acquire must not wait for it.
	chaosReleaseTimeout = 2 * time.Second
)

// ChaosSpec says what a chaos client does.
type ChaosSpec struct {
	// Contender is the contender id in the child's contender table; Addrs
	// the addresses it dials (through the client's own fault-proxy links);
	// Lease its lease or TTL; Key the lock key.
	Contender string
	Addrs     []string
	Lease     time.Duration
	Key       string
	// Client names the process in the history ("c1"); History is the file
	// it records to (created or truncated).
	Client, History string
	// Fenced and Unfenced are the host:port of the guarded stores.
	Fenced, Unfenced string
	// Seed seeds the client's hold and think times.
	Seed uint64
}

func (s ChaosSpec) args() []string {
	return append(Spec{Contender: s.Contender, Addrs: s.Addrs, Lease: s.Lease, Key: s.Key}.args(),
		"-mode", modeChaos, "-client", s.Client, "-history", s.History,
		"-fenced", s.Fenced, "-unfenced", s.Unfenced, "-seed", strconv.FormatUint(s.Seed, 10))
}

func (s ChaosSpec) validate() error {
	if s.Client == "" || s.History == "" || s.Fenced == "" || s.Unfenced == "" {
		return errors.New("holder: chaos mode needs -client, -history, -fenced and -unfenced")
	}
	return nil
}

// StartChaos starts a chaos client child and returns once it runs (it has
// opened its lock client and its history file). Follow its lines
// ("held", "free") or leave them to Close. Close stops it: SIGCONT,
// EOF on stdin (it releases what it holds and exits), SIGKILL after
// DefaultCloseGrace; ExitErr then says whether it ended cleanly. On error
// the child is already reaped.
func StartChaos(ctx context.Context, c Command, s ChaosSpec) (*Process, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	p, line, err := start(ctx, c, s.args())
	if err != nil {
		return nil, err
	}
	if line != lineReady {
		p.Close()
		if rest, ok := strings.CutPrefix(line, lineError+" "); ok {
			return nil, fmt.Errorf("holder: %s", rest)
		}
		return nil, fmt.Errorf("holder: unexpected line %q", line)
	}
	return p, nil
}

// RunChaos is the chaos client (see the comment at the top of this file):
// it records into s.History, says "ready" on out, and loops until in
// reaches EOF or ctx ends; it returns the recorder's error, if any.
func RunChaos(ctx context.Context, l bench.Locker, s ChaosSpec, in io.Reader, out io.Writer) error {
	if err := s.validate(); err != nil {
		return err
	}
	rec, err := check.Create(s.History)
	if err != nil {
		fmt.Fprintf(out, "%s %s\n", lineError, oneLine(err))
		return err
	}
	c := &chaosClient{
		spec: s, l: l, rec: rec.Client(s.Client), out: out,
		fenced: guardedstore.NewClient(s.Fenced), unfenced: guardedstore.NewClient(s.Unfenced),
		rng: rand.New(rand.NewPCG(s.Seed, 0x6368616f73)), // "chaos"
	}
	defer c.fenced.Close()
	defer c.unfenced.Close()
	run, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, in) // EOF: the bench is done with us
		stop()
	}()
	if _, err := fmt.Fprintln(out, lineReady); err != nil {
		return errors.Join(fmt.Errorf("holder: reporting: %w", err), rec.Close())
	}
	for run.Err() == nil && rec.Err() == nil {
		c.cycle(run)
	}
	return rec.Close()
}

// chaosClient is the state of one chaos client's loop.
type chaosClient struct {
	spec             ChaosSpec
	l                bench.Locker
	rec              *check.Client
	fenced, unfenced *guardedstore.Client
	rng              *rand.Rand
	writes           int // register writes so far: the values' numbers

	outMu sync.Mutex // the loop and the lost watcher both say things
	out   io.Writer
}

// say writes one line to the bench; a failed write is ignored (the
// bench stops following at the end of the run).
func (c *chaosClient) say(line string) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	fmt.Fprintln(c.out, line)
}

// leases returns a duration drawn uniformly between lo and hi leases.
func (c *chaosClient) leases(lo, hi float64) time.Duration {
	return time.Duration((lo + (hi-lo)*c.rng.Float64()) * float64(c.spec.Lease))
}

// cycle acquires, works under the lock, releases and thinks.
func (c *chaosClient) cycle(ctx context.Context) {
	inv := c.rec.Invoke(check.Acquire, check.Event{})
	actx, cancel := context.WithTimeout(ctx, chaosAcquireLeases*c.spec.Lease+time.Second)
	h, err := c.l.Acquire(actx, c.spec.Key)
	cancel()
	if err != nil {
		if errors.Is(err, bench.ErrGaveUp) {
			inv.Fail(err)
		} else {
			// A timeout or a lost connection: the grant may have been
			// made and not seen.
			inv.Info(err, check.Event{})
		}
		_ = bench.Sleep(ctx, c.leases(chaosThinkMin, chaosThinkMax))
		return
	}
	var tok *uint64
	if t, ok := h.Token(); ok {
		tok = &t
	}
	inv.OK(check.Event{Token: tok})
	c.say(lineHeld)
	w := c.watch(h)

	hold := c.leases(chaosHoldMin, chaosHoldMax)
	if c.rng.Float64() < chaosLongShare {
		hold = c.leases(chaosLongMin, chaosLongMax)
	}
	type step struct {
		store  string
		client *guardedstore.Client
		op     func(ctx context.Context, store string, sc *guardedstore.Client, tok *uint64, gap time.Duration, lost <-chan struct{})
	}
	var steps []step
	for _, st := range []struct {
		name string
		sc   *guardedstore.Client
	}{{check.StoreFenced, c.fenced}, {check.StoreUnfenced, c.unfenced}} {
		steps = append(steps, step{st.name, st.sc, c.readRegister}, step{st.name, st.sc, c.writeRegister}, step{st.name, st.sc, c.increment})
	}
	// The hold is spread over the gaps: one before each step, one inside
	// each increment (between its read and its write), one before the
	// release, so that a fault can strike anywhere in it.
	gap := hold / time.Duration(len(steps)+2+1)
	for _, st := range steps {
		if bench.Sleep(ctx, gap) != nil || isClosed(h.Lost()) {
			break
		}
		st.op(ctx, st.store, st.client, tok, gap, h.Lost())
	}
	_ = bench.Sleep(ctx, gap)
	w.release(ctx, h)
	_ = bench.Sleep(ctx, c.leases(chaosThinkMin, chaosThinkMax))
}

// readRegister reads the store's register.
func (c *chaosClient) readRegister(ctx context.Context, store string, sc *guardedstore.Client, tok *uint64, _ time.Duration, _ <-chan struct{}) {
	inv := c.rec.Invoke(check.Read, check.Event{Store: store, Token: tok})
	r, err := c.read(ctx, sc, "/register", tok)
	switch {
	case err != nil:
		complete(inv, err)
	case !r.Accepted:
		inv.Fail(fmt.Errorf("read rejected: %s", r.Reason))
	default:
		inv.OK(check.Event{Value: check.Ptr(r.Value)})
	}
}

// writeRegister writes the next "<client>-<n>" to the store's register.
func (c *chaosClient) writeRegister(ctx context.Context, store string, sc *guardedstore.Client, tok *uint64, _ time.Duration, _ <-chan struct{}) {
	c.writes++
	v := fmt.Sprintf("%s-%d", c.spec.Client, c.writes)
	inv := c.rec.Invoke(check.Write, check.Event{Store: store, Token: tok, Value: &v})
	e, err := c.write(ctx, sc, "/register", tok, v)
	if err != nil {
		complete(inv, err)
		return
	}
	inv.OK(check.Event{Accepted: check.Ptr(e.Accepted)})
}

// increment reads the store's counter, waits gap and writes it back plus
// one: a read-then-write that a stale holder can make lose an update. It
// checks lost again before the write, as a careful user does: the wait
// is where a fault strikes, and a client that knew it lost the lock must
// not be blamed for not looking.
func (c *chaosClient) increment(ctx context.Context, store string, sc *guardedstore.Client, tok *uint64, gap time.Duration, lost <-chan struct{}) {
	inv := c.rec.Invoke(check.Increment, check.Event{Store: store, Token: tok})
	r, err := c.read(ctx, sc, "/counter", tok)
	switch {
	case err != nil:
		complete(inv, err)
		return
	case !r.Accepted:
		inv.Fail(fmt.Errorf("read rejected: %s", r.Reason))
		return
	}
	n := int64(0)
	if r.Value != "" {
		if n, err = strconv.ParseInt(r.Value, 10, 64); err != nil {
			inv.Fail(fmt.Errorf("counter holds %q: %w", r.Value, err))
			return
		}
	}
	_ = bench.Sleep(ctx, gap)
	if isClosed(lost) {
		inv.Fail(errLostBeforeWrite)
		return
	}
	// The write leaves now, not at the invocation: a client frozen since
	// its read writes late, and the stale-write checker judges it then.
	sent := check.Now()
	e, err := c.write(ctx, sc, "/counter", tok, strconv.FormatInt(n+1, 10))
	if err != nil {
		if errors.Is(err, guardedstore.ErrRefused) {
			inv.Fail(err)
		} else {
			inv.Info(err, check.Event{Read: check.Ptr(n), Wrote: check.Ptr(n + 1), WriteT: &sent})
		}
		return
	}
	inv.OK(check.Event{Read: check.Ptr(n), Wrote: check.Ptr(n + 1), Accepted: check.Ptr(e.Accepted), WriteT: &sent})
}

func (c *chaosClient) read(ctx context.Context, sc *guardedstore.Client, name string, tok *uint64) (guardedstore.ReadResult, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chaosStoreTimeout)
	defer cancel()
	return sc.Read(rctx, guardedstore.Read{Client: c.spec.Client, Lock: c.spec.Key + name, Token: tok})
}

func (c *chaosClient) write(ctx context.Context, sc *guardedstore.Client, name string, tok *uint64, v string) (guardedstore.Entry, error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chaosStoreTimeout)
	defer cancel()
	return sc.Write(wctx, guardedstore.Write{Client: c.spec.Client, Lock: c.spec.Key + name, Token: tok, Payload: v})
}

// errLostBeforeWrite fails an increment whose client learned between the
// read and the write that it lost the lock: the write was not sent.
var errLostBeforeWrite = errors.New("holder: lost the lock between the read and the write; the write was not sent")

// complete records a store request's error: a refusal had no effect,
// anything else (a timeout, a broken connection) may have.
func complete(inv *check.Invocation, err error) {
	if errors.Is(err, guardedstore.ErrRefused) {
		inv.Fail(err)
		return
	}
	inv.Info(err, check.Event{})
}

// lostWatcher records a hold's lost notice unless release was invoked
// first.
type lostWatcher struct {
	c         *chaosClient
	mu        sync.Mutex
	releasing bool // release was invoked
	freed     bool // "free" was said
	done      chan struct{}
}

func (c *chaosClient) watch(h bench.Held) *lostWatcher {
	w := &lostWatcher{c: c, done: make(chan struct{})}
	go func() {
		select {
		case <-h.Lost():
			w.mu.Lock()
			if !w.releasing {
				c.rec.Lost()
				c.say(lineFree)
				w.freed = true
			}
			w.mu.Unlock()
		case <-w.done:
		}
	}()
	return w
}

// release invokes release (which ends the client's belief: no lost
// notice after it) and then calls Release.
func (w *lostWatcher) release(ctx context.Context, h bench.Held) {
	w.mu.Lock()
	w.releasing = true
	if !w.freed {
		w.c.say(lineFree)
	}
	inv := w.c.rec.Invoke(check.Release, check.Event{})
	w.mu.Unlock()
	close(w.done)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(chaosReleaseTimeout, w.c.spec.Lease))
	defer cancel()
	if err := h.Release(rctx); err != nil {
		inv.Info(err, check.Event{})
		return
	}
	inv.OK(check.Event{})
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Follow calls f with each line the child writes from now on, in order,
// on a goroutine of its own, until the child's stdout ends; Close returns
// only after f has had the last one. Use it for a child that talks on its
// own (a chaos client's "held" and "free"), once, before Close; do not mix
// it with the calls that wait for a line (Released, Wrote).
func (p *Process) Follow(f func(line string)) {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	done := make(chan struct{})
	p.followed = done
	go func() {
		defer close(done)
		for line := range p.lines {
			f(line)
		}
	}()
}
