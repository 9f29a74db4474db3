package network

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// Spread summarises samples of a duration.
type Spread struct {
	N                  int
	P50, P90, Min, Max time.Duration
}

func spreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(int(q*float64(len(s))), len(s)-1)] }
	return Spread{N: len(s), P50: at(0.5), P90: at(0.9), Min: s[0], Max: s[len(s)-1]}
}

func (s Spread) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	return fmt.Sprintf("p50 %v p90 %v min %v max %v (n=%d)", r(s.P50), r(s.P90), r(s.Min), r(s.Max), s.N)
}

// MeasureOptions say what Measure measures.
type MeasureOptions struct {
	// Addr is the server address whose TCP connect time is measured; ""
	// is the host's echo listener.
	Addr string
	// From, when set, measures from that host instead of from the bench
	// (host to host, as cluster members talk).
	From *Host
	// Samples is the number of round trips and of connects; default 50.
	Samples int
	// Timeout bounds each sample; default 5s (a lost SYN costs the
	// kernel's 1 s retransmission timeout, which is measured, not hidden).
	Timeout time.Duration
}

// Measurement is the path to one host as measured: TCP round trips
// (ping-pong of 16 bytes on one connection to the host's echo listener)
// and TCP connects, against the asked RTT.
type Measurement struct {
	Host, From string // From is "" for the bench
	Profile    string
	AskedRTT   time.Duration
	// Subtracted is the line's compensation for AskedRTT.
	Subtracted  time.Duration
	RTT         Spread
	Connect     Spread
	ConnectAddr string
	// Failed counts the samples that failed or timed out.
	Failed int
}

// Measure measures the path to h. Every sample crosses the line like any
// other packet; with a lossy profile, a sample whose packets were lost
// shows the retransmission.
func (n *Network) Measure(ctx context.Context, h *Host, o MeasureOptions) (Measurement, error) {
	if o.Samples <= 0 {
		o.Samples = 50
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	echo, err := h.echoAddr()
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Host: h.name, Profile: h.Profile().String(), AskedRTT: h.Profile().RTT, ConnectAddr: o.Addr}
	if m.ConnectAddr == "" {
		m.ConnectAddr = echo
	}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	if o.From != nil {
		m.From = o.From.name
		if fp := o.From.Profile(); fp.RTT > m.AskedRTT {
			m.AskedRTT, m.Profile = fp.RTT, fp.String()
		}
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return o.From.DialContext(ctx, "tcp", addr) }
	}
	if c, ok := n.Compensation(m.AskedRTT); ok {
		m.Subtracted = c.Subtracted
	}
	rtts, failed, err := pingPong(ctx, dial, echo, o.Samples, o.Timeout)
	if err != nil {
		return Measurement{}, fmt.Errorf("network: measure %s: %w", h.name, err)
	}
	connects, cfailed, err := connectTimes(ctx, dial, m.ConnectAddr, o.Samples, o.Timeout)
	if err != nil {
		return Measurement{}, fmt.Errorf("network: measure %s: %w", h.name, err)
	}
	m.RTT, m.Connect, m.Failed = spreadOf(rtts), spreadOf(connects), failed+cfailed
	return m, nil
}

// pingPong times round trips of 16 bytes on one connection to an echo
// listener at addr; a round trip that fails is counted and the
// connection made again.
func pingPong(ctx context.Context, dial func(context.Context, string) (net.Conn, error), addr string, samples int, timeout time.Duration) (rtts []time.Duration, failed int, err error) {
	var c net.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	msg := make([]byte, 16)
	got := make([]byte, 16)
	for len(rtts) < samples {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if failed > samples {
			return nil, failed, fmt.Errorf("more than %d of %d round trips to %s failed", failed, samples, addr)
		}
		if c == nil {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			c, err = dial(dctx, addr)
			cancel()
			if err != nil {
				failed++
				c = nil
				continue
			}
			// One round trip first, so that the connection is warm.
			c.SetDeadline(time.Now().Add(timeout))
			if _, err := c.Write(msg); err != nil {
				c.Close()
				c, failed = nil, failed+1
				continue
			}
			if _, err := io.ReadFull(c, got); err != nil {
				c.Close()
				c, failed = nil, failed+1
				continue
			}
		}
		c.SetDeadline(time.Now().Add(timeout))
		start := time.Now()
		_, werr := c.Write(msg)
		_, rerr := io.ReadFull(c, got)
		d := time.Since(start)
		if werr != nil || rerr != nil {
			c.Close()
			c, failed = nil, failed+1
			continue
		}
		rtts = append(rtts, d)
	}
	return rtts, failed, nil
}

// connectTimes times TCP connects to addr, each closed at once.
func connectTimes(ctx context.Context, dial func(context.Context, string) (net.Conn, error), addr string, samples int, timeout time.Duration) (ds []time.Duration, failed int, err error) {
	for len(ds) < samples {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if failed > samples {
			return nil, failed, fmt.Errorf("more than %d of %d connects to %s failed", failed, samples, addr)
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		c, err := dial(dctx, addr)
		d := time.Since(start)
		cancel()
		if err != nil {
			failed++
			continue
		}
		c.Close()
		ds = append(ds, d)
	}
	return ds, failed, nil
}

// echoServer echoes every byte it receives, on a listener in some
// namespace; it serves from the bench process.
type echoServer struct {
	l     net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func serveEcho(l net.Listener) *echoServer {
	e := &echoServer{l: l, conns: map[net.Conn]bool{}}
	e.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			if e.conns == nil {
				e.mu.Unlock()
				c.Close()
				return
			}
			e.conns[c] = true
			e.mu.Unlock()
			e.wg.Go(func() {
				io.Copy(c, c)
				c.Close()
				e.mu.Lock()
				delete(e.conns, c)
				e.mu.Unlock()
			})
		}
	})
	return e
}

func (e *echoServer) addr() string { return e.l.Addr().String() }

func (e *echoServer) close() {
	e.l.Close()
	e.mu.Lock()
	for c := range e.conns {
		c.Close()
	}
	e.conns = nil
	e.mu.Unlock()
	e.wg.Wait()
}

// echoAddr returns the address of the host's echo listener, starting it
// on first use.
func (h *Host) echoAddr() (string, error) {
	h.mu.Lock()
	if h.echo != nil {
		defer h.mu.Unlock()
		return h.echo.addr(), nil
	}
	h.mu.Unlock()
	l, err := h.Listen("tcp", h.Addr(0))
	if err != nil {
		return "", fmt.Errorf("network: echo listener in host %s: %w", h.name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		l.Close()
		return "", ErrClosed
	}
	if h.echo == nil {
		h.echo = serveEcho(l)
	} else {
		l.Close()
	}
	return h.echo.addr(), nil
}

// calibrate measures the direct path and the zero line and derives the
// line's own round trip.
func (n *Network) calibrate(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("network: calibration listener: %w", err)
	}
	direct := serveEcho(l)
	defer direct.close()
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	zeroAddr, err := n.zero.echoAddr()
	if err != nil {
		return err
	}
	samples, timeout := n.opts.CalibrationSamples, 2*time.Second
	// Interleave the two paths in rounds, so that a burst of load on the
	// machine falls on both alike.
	var d, z, dc, zc []time.Duration
	const rounds = 5
	for range rounds {
		part := max(samples/rounds, 1)
		for _, p := range []struct {
			addr      string
			rtt, conn *[]time.Duration
		}{{direct.addr(), &d, &dc}, {zeroAddr, &z, &zc}} {
			r, _, err := pingPong(ctx, dial, p.addr, part, timeout)
			if err != nil {
				return fmt.Errorf("network: calibration: %w", err)
			}
			c, _, err := connectTimes(ctx, dial, p.addr, max(part/4, 1), timeout)
			if err != nil {
				return fmt.Errorf("network: calibration: %w", err)
			}
			*p.rtt, *p.conn = append(*p.rtt, r...), append(*p.conn, c...)
		}
	}
	n.calib = Calibration{Direct: spreadOf(d), ZeroLine: spreadOf(z), DirectConnect: spreadOf(dc), ZeroLineConnect: spreadOf(zc)}
	n.calib.OwnRTT = max(n.calib.ZeroLine.P50-n.calib.Direct.P50, 0)
	if n.calib.ZeroLine.N == 0 {
		return errors.New("network: calibration measured nothing")
	}
	return nil
}

// compensationRounds is how many times compensate measures, each round at
// the hold the rounds before it found (how long the ends sleep changes
// what their wake-ups cost), compensationGap apart. The least excess of a
// round sets the compensation: load from other work on the machine only
// ever adds to a round trip, and the line must not subtract a burst of it
// from every packet of the run.
const compensationRounds, compensationGap = 5, 100 * time.Millisecond

// compensationTime bounds the round trips of one round; a round takes 10
// of them at least and 60 at most.
const compensationTime = 60 * time.Millisecond

// compensate returns the Compensation of rtt, measuring it through the
// calibration host's link on first use.
func (n *Network) compensate(ctx context.Context, rtt time.Duration) (Compensation, error) {
	n.compMu.Lock()
	defer n.compMu.Unlock()
	if c, ok := n.comps[rtt]; ok {
		return c, nil
	}
	addr, err := n.zero.echoAddr()
	if err != nil {
		return Compensation{}, err
	}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	samples := min(max(int(compensationTime/rtt), 10), 60)
	c := Compensation{RTT: rtt}
	hold := rtt / 2
	var excess []time.Duration
	for round := range compensationRounds {
		if round > 0 {
			select {
			case <-ctx.Done():
				return Compensation{}, ctx.Err()
			case <-time.After(compensationGap):
			}
		}
		if _, err := n.line.call(request{Op: "set", Index: n.zero.index, Link: linkParams{RTT: int64(rtt), Hold: int64(hold)}}, -1); err != nil {
			return Compensation{}, err
		}
		rtts, _, err := pingPong(ctx, dial, addr, samples, 2*time.Second+2*rtt)
		if err != nil {
			return Compensation{}, fmt.Errorf("network: compensation for %v: %w", rtt, err)
		}
		s := spreadOf(rtts)
		if round == 0 {
			c.Uncompensated = s
		}
		excess = append(excess, s.P50-2*hold)
		hold = min(max(rtt-slices.Min(excess), 0)/2, rtt/2)
	}
	if _, err := n.line.call(request{Op: "set", Index: n.zero.index, Link: linkParams{}}, -1); err != nil {
		return Compensation{}, err
	}
	c.Excess = spreadOf(excess)
	c.Subtracted = rtt - 2*hold
	n.comps[rtt] = c
	n.log.Debug("network: compensation", "rtt", rtt, "uncompensated", c.Uncompensated.String(), "excess", c.Excess.String(), "subtracted", c.Subtracted)
	return c, nil
}
