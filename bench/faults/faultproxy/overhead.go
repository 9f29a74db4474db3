package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/aclements/go-moremath/stats"
)

// Quantiles of a set of round-trip times.
type Quantiles struct {
	P50, P90, P99 time.Duration
}

// Overhead is what one link adds to a small request/response round trip
// on loopback: the same exchange timed directly and through a Link.
type Overhead struct {
	// Samples is the number of round trips timed on each path.
	Samples int
	// Direct and Proxied are the round-trip times on each path.
	Direct, Proxied Quantiles
	// Added is Proxied.P50 - Direct.P50: the median cost of the proxy,
	// to show beside figures measured through one.
	Added time.Duration
}

// overheadMessage is the size of the request and of the response: a
// small lock command.
const overheadMessage = 32

// MeasureOverhead times samples round trips of a 32-byte request and
// response to an echo server on 127.0.0.1, directly and through a fresh
// Link, alternating so both paths see the same machine noise, after a
// warm-up. Bound it with ctx; a few thousand samples take well under a
// second on an idle machine.
func MeasureOverhead(ctx context.Context, samples int) (Overhead, error) {
	if samples <= 0 {
		return Overhead{}, errors.New("faultproxy: overhead needs samples > 0")
	}
	if err := ctx.Err(); err != nil {
		return Overhead{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Overhead{}, fmt.Errorf("faultproxy: overhead: %w", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()

	p := New()
	defer p.Close()
	link, err := p.Link("overhead", ln.Addr().String())
	if err != nil {
		return Overhead{}, err
	}
	var d net.Dialer
	direct, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return Overhead{}, fmt.Errorf("faultproxy: overhead: %w", err)
	}
	defer direct.Close()
	proxied, err := d.DialContext(ctx, "tcp", link.Addr())
	if err != nil {
		return Overhead{}, fmt.Errorf("faultproxy: overhead: %w", err)
	}
	defer proxied.Close()
	// The connections obey ctx through their deadline.
	stop := context.AfterFunc(ctx, func() {
		direct.SetDeadline(time.Unix(1, 0))
		proxied.SetDeadline(time.Unix(1, 0))
	})
	defer stop()

	req, resp := make([]byte, overheadMessage), make([]byte, overheadMessage)
	roundTrip := func(c net.Conn) (time.Duration, error) {
		start := time.Now()
		if _, err := c.Write(req); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	warmup := min(samples, 100)
	rtts := [2][]time.Duration{}
	for i := range warmup + samples {
		for j, c := range []net.Conn{direct, proxied} {
			rtt, err := roundTrip(c)
			if err != nil {
				if ctx.Err() != nil {
					return Overhead{}, ctx.Err()
				}
				return Overhead{}, fmt.Errorf("faultproxy: overhead: %w", err)
			}
			if i >= warmup {
				rtts[j] = append(rtts[j], rtt)
			}
		}
	}
	o := Overhead{Samples: samples, Direct: quantiles(rtts[0]), Proxied: quantiles(rtts[1])}
	o.Added = o.Proxied.P50 - o.Direct.P50
	return o, nil
}

// quantiles of a non-empty set (nearest rank).
func quantiles(d []time.Duration) Quantiles {
	v := make([]float64, len(d))
	for i, x := range d {
		v[i] = float64(x)
	}
	slices.Sort(v)
	q := func(p float64) time.Duration {
		return time.Duration(stats.Sample{Xs: v, Sorted: true}.Quantile(p / 100))
	}
	return Quantiles{P50: q(50), P90: q(90), P99: q(99)}
}
