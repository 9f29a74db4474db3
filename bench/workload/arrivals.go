package workload

import (
	"math"
	"math/rand/v2"
	"time"
)

// Loop is how requests arrive.
type Loop int

// The arrival loops.
const (
	// Open: requests arrive at a rate whatever the lock does, and each
	// waits for a free client; latency counts from the arrival (the
	// intended start), so a backlog shows (coordinated omission
	// corrected, as wrk2 and k6's arrival-rate executors do).
	Open Loop = iota
	// Closed: each client loops acquire → hold → release → think; the
	// rate is what the lock allows.
	Closed
)

// Spacing is how an open loop spaces its arrivals.
type Spacing int

// The spacings of an open loop.
const (
	// Poisson arrivals have exponential gaps of mean 1/Rate: independent
	// callers, the usual model of many clients.
	Poisson Spacing = iota
	// Constant arrivals come exactly every 1/Rate, as wrk2 paces them.
	Constant
)

// Arrivals is the arrival process of a workload.
type Arrivals struct {
	Loop Loop
	// Rate is the open loop's mean arrival rate per second.
	Rate float64
	// Spacing is the open loop's spacing of arrivals.
	Spacing Spacing
	// Think is the closed loop's pause after each release.
	Think Distribution
}

// String describes a: "open loop, Poisson arrivals at 300/s", "closed
// loop, think time exponential, mean 5ms".
func (a Arrivals) String() string {
	if a.Loop == Closed {
		if a.Think.Kind == Fixed && a.Think.Fixed == 0 {
			return "closed loop, no think time"
		}
		return "closed loop, think time " + a.Think.String()
	}
	if a.Spacing == Constant {
		return "open loop, one arrival every " + fmtDuration(seconds(1/a.Rate)) + " (" + fmtRate(a.Rate) + ")"
	}
	return "open loop, Poisson arrivals at " + fmtRate(a.Rate)
}

// Request is one arrival of an open loop.
type Request struct {
	// Index numbers the requests from 0 in due order.
	Index int64
	// Due is the intended start, from the start of the run (warm-up
	// included).
	Due time.Duration
	// Key is the key index, Hold how long to hold the key once granted.
	Key  int
	Hold time.Duration
}

// Random streams of one seed: the open loop's schedule and each closed
// client's steps draw from their own, so that adding clients or a warm-up
// does not shift any other sequence.
const (
	streamSchedule = 0
	streamClient   = 1 // + client number
)

// Rand returns the random source of one stream of w's seed.
func (w Workload) rand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(w.Seed, stream))
}

// Schedule is the open loop's sequence of requests, the same for a seed in
// every run and for every contender: arrival times, keys and holds are
// drawn here in due order, not by the client that serves a request. A
// Schedule is not safe for concurrent use: the engine hands requests to
// its clients under one lock.
type Schedule struct {
	r       *rand.Rand
	keys    *KeyChooser
	hold    Distribution
	rate    float64
	spacing Spacing
	next    int64
	due     float64 // seconds; the running sum of Poisson gaps
}

// Schedule returns the open loop's requests of w from the start of a run
// (warm-up first). It panics for a closed-loop workload.
func (w Workload) Schedule() *Schedule {
	if w.Arrivals.Loop != Open {
		panic("workload: Schedule of a closed-loop workload")
	}
	return &Schedule{
		r: w.rand(streamSchedule), keys: w.Keys.Chooser(), hold: w.Hold,
		rate: w.Arrivals.Rate, spacing: w.Arrivals.Spacing,
	}
}

// Next returns the next request.
func (s *Schedule) Next() Request {
	i := s.next
	s.next++
	var due float64
	if s.spacing == Constant {
		due = float64(i) / s.rate // not a running sum: no drift
	} else {
		if i > 0 {
			s.due += s.r.ExpFloat64() / s.rate
		}
		due = s.due
	}
	return Request{
		Index: i,
		Due:   time.Duration(math.Round(due * 1e9)),
		Key:   s.keys.Next(s.r),
		Hold:  s.hold.Sample(s.r),
	}
}

// Step is one cycle of a closed-loop client.
type Step struct {
	Key         int
	Hold, Think time.Duration
}

// ClientPlan is one closed-loop client's sequence of steps, the same for
// a seed and a client number in every run. It is not safe for concurrent
// use: one client goroutine owns it.
type ClientPlan struct {
	r     *rand.Rand
	keys  *KeyChooser
	hold  Distribution
	think Distribution
}

// Client returns the steps of closed-loop client i (0 ≤ i < Clients.Count).
// Each client chooses its own keys. It works for an open-loop workload too
// (think times are then zero), for measuring its closed-loop maximum.
func (w Workload) Client(i int) *ClientPlan {
	return &ClientPlan{
		r: w.rand(streamClient + uint64(i)), keys: w.Keys.Chooser(),
		hold: w.Hold, think: w.Arrivals.Think,
	}
}

// Next returns the client's next step.
func (c *ClientPlan) Next() Step {
	return Step{Key: c.keys.Next(c.r), Hold: c.hold.Sample(c.r), Think: c.think.Sample(c.r)}
}
