// Package nemesis injects the chaos scenario's faults: Plan draws a
// seeded schedule of random faults with random durations, some
// overlapping, and an Executor applies it to a contender's targets (its
// client processes, its servers, a server's wall clock), recording each
// fault's start and end into the history (package check). Told which
// client holds the lock (Targets.Holder), the executor aims client faults
// at the holder. The schedule
// and its Config, seed included, go into the results: Plan with the same
// Config gives the same schedule, so a run can be repeated, and every
// contender of a run gets the same one.
package nemesis

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/monolock/monolock-bench/bench/check"
)

// Kind is a kind of fault.
type Kind string

// Kinds of faults.
const (
	// ClientPause freezes a client process (SIGSTOP) past the lease and
	// resumes it (SIGCONT): a GC pause, a VM freeze.
	ClientPause Kind = "client-pause"
	// ClientHostLoss makes a client's connections to the lock servers go
	// silent both ways (through the fault proxy: nothing closed or reset),
	// while the client keeps running and reaching the guarded stores.
	ClientHostLoss Kind = "client-host-loss"
	// ClientPartition drops one direction of a client's traffic to the
	// lock servers (Fault.Direction).
	ClientPartition Kind = "client-partition"
	// ServerKill kills a server (SIGKILL) and restarts it on the same
	// address after the fault's duration.
	ServerKill Kind = "server-kill"
	// ServerPause freezes a server and thaws it after the fault's
	// duration.
	ServerPause Kind = "server-pause"
	// ClockStep steps a server's wall clock forward by Fault.Step and sets
	// it back after the fault's duration; only for servers that expire
	// leases on a wall clock the bench can move.
	ClockStep Kind = "clock-step"
)

// Kinds lists every kind, in the order counts are spread over.
var Kinds = []Kind{ClientPause, ClientHostLoss, ClientPartition, ServerKill, ServerPause, ClockStep}

// clientKind reports whether k acts on a client.
func clientKind(k Kind) bool { return k == ClientPause || k == ClientHostLoss || k == ClientPartition }

// Direction is the direction a one-sided partition drops.
type Direction string

// Directions of a partition.
const (
	// ToServer drops the client's packets to the server: the server hears
	// nothing (no renewals), the client still hears the server.
	ToServer Direction = "to-server"
	// FromServer drops the server's packets to the client: the server
	// hears the client's renewals, the client hears no answers.
	FromServer Direction = "from-server"
)

// Span is a range of durations a value is drawn from, uniformly.
type Span struct {
	Min time.Duration `json:"min_ns"`
	Max time.Duration `json:"max_ns"`
}

// Fault is one fault of a schedule.
type Fault struct {
	// ID numbers the faults from 1 in order of Start.
	ID   int  `json:"id"`
	Kind Kind `json:"kind"`
	// Start is the fault's start from the run's start; Duration how long
	// it lasts (a server-kill: how long the server stays down before its
	// restart; a clock-step: how long the clock stays stepped).
	Start    time.Duration `json:"start_ns"`
	Duration time.Duration `json:"duration_ns"`
	// Client is the client number (1…Config.Clients) of a client fault.
	Client int `json:"client,omitempty"`
	// Server selects the server of a server fault or clock step among
	// those the contender has: the ((Server−1) mod n)-th. The schedule
	// does not know n; a number in 1…65536 keeps the choice uniform for
	// every contender.
	Server int `json:"server,omitempty"`
	// Direction is a partition's direction.
	Direction Direction `json:"direction,omitempty"`
	// Step is a clock step's size (forward).
	Step time.Duration `json:"step_ns,omitempty"`
}

// End is when the fault is scheduled to end.
func (f Fault) End() time.Duration { return f.Start + f.Duration }

// Config says what Plan draws. DefaultConfig fills it from the lease.
type Config struct {
	// Seed seeds the draw; Plan with the same Config gives the same
	// schedule, in every Go release (the draw uses PCG's output only).
	Seed uint64 `json:"seed"`
	// Clients is the number of client processes faults can hit.
	Clients int `json:"clients"`
	// Counts says how many faults of each kind to draw; their order is
	// shuffled.
	Counts map[Kind]int `json:"counts"`
	// Durations gives each kind's range of durations.
	Durations map[Kind]Span `json:"durations"`
	// ClockStep is the range of a clock step's size.
	ClockStep Span `json:"clock_step"`
	// Settle is the quiet time after the last fault ended before a fault
	// that does not overlap starts.
	Settle Span `json:"settle"`
	// Overlap is the chance that a fault starts while the one before it
	// still lasts (between 20% and 80% into it).
	Overlap float64 `json:"overlap"`
	// MaxConcurrent bounds the faults active at once.
	MaxConcurrent int `json:"max_concurrent"`
	// Lead is the quiet time at the run's start, before the first fault.
	Lead time.Duration `json:"lead_ns"`
}

// Defaults of DefaultConfig that do not scale with the lease.
const (
	// DefaultOverlap is the chance a fault starts inside the previous one.
	DefaultOverlap = 0.3
	// DefaultMaxConcurrent is how many faults may be active at once.
	DefaultMaxConcurrent = 2
)

// DefaultConfig returns the chaos scenario's config for a lease and
// number of clients, with counts (FullCounts or QuickCounts):
//
//   - client-pause, client-host-loss, client-partition: 1.25–1.75 leases
//     (past the lease: the holder loses it while it is away);
//   - server-kill: down 0.25–0.75 leases, then the restart;
//   - server-pause: 0.5–1.5 leases (below and past the lease);
//   - clock-step: +2–4 leases, held 0.5–1 lease;
//   - settle 0.25–0.5 leases, overlap 30%, at most 2 at once, lead 0.5
//     leases.
//
// With FullCounts and a 2s lease a schedule spans 53–83s (68s on
// average over seeds 1–1000), restarts not counted; with QuickCounts
// 10–21s.
func DefaultConfig(seed uint64, lease time.Duration, clients int, counts map[Kind]int) Config {
	of := func(lo, hi float64) Span {
		return Span{time.Duration(lo * float64(lease)), time.Duration(hi * float64(lease))}
	}
	away := of(1.25, 1.75)
	return Config{
		Seed:    seed,
		Clients: clients,
		Counts:  counts,
		Durations: map[Kind]Span{
			ClientPause: away, ClientHostLoss: away, ClientPartition: away,
			ServerKill:  of(0.25, 0.75),
			ServerPause: of(0.5, 1.5),
			ClockStep:   of(0.5, 1),
		},
		ClockStep:     of(2, 4),
		Settle:        of(0.25, 0.5),
		Overlap:       DefaultOverlap,
		MaxConcurrent: DefaultMaxConcurrent,
		Lead:          lease / 2,
	}
}

// FullUpperBound is the Wilson 95% upper bound a full run must reach on a
// zero-violation rate.
const FullUpperBound = 0.15

// universal are the kinds every contender on a backend that acts on its
// servers can do; a clock step needs a server with a movable wall clock.
var universal = []Kind{ClientPause, ClientHostLoss, ClientPartition, ServerKill, ServerPause}

// CountsFor spreads applicable faults as evenly as possible over the kinds
// every contender can do (the first kinds of Kinds get the remainder) and
// adds clockSteps clock steps, which only some contenders can do: every
// contender then gets at least applicable faults.
func CountsFor(applicable, clockSteps int) map[Kind]int {
	c := map[Kind]int{ClockStep: clockSteps}
	for i, k := range universal {
		c[k] = applicable / len(universal)
		if i < applicable%len(universal) {
			c[k]++
		}
	}
	return c
}

// FullCounts are the full run's counts: enough faults that every
// contender reaches FullUpperBound at zero violations (22: 0 of 22 has
// the upper bound 14.9%), plus 4 clock steps: 26 in all.
func FullCounts() map[Kind]int {
	return CountsFor(check.TrialsForUpperBound(FullUpperBound), 4)
}

// QuickCounts are the quick run's: one fault of each kind.
func QuickCounts() map[Kind]int { return CountsFor(len(universal), 1) }

// Schedule is a drawn schedule with the Config it was drawn from.
type Schedule struct {
	Config Config  `json:"config"`
	Faults []Fault `json:"faults"`
}

// Span is the time from the run's start to the last scheduled end.
func (s Schedule) Span() time.Duration {
	var end time.Duration
	for _, f := range s.Faults {
		end = max(end, f.End())
	}
	return end
}

// ErrBadConfig is wrapped by Plan's errors about its Config.
var ErrBadConfig = errors.New("nemesis: bad config")

func (c Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadConfig, fmt.Sprintf(format, args...))
	}
	clientFaults := 0
	for k, n := range c.Counts {
		if !slices.Contains(Kinds, k) {
			return bad("unknown kind %q", k)
		}
		if n < 0 {
			return bad("%d faults of %s", n, k)
		}
		if n == 0 {
			continue
		}
		if clientKind(k) {
			clientFaults += n
		}
		if err := c.Durations[k].validate(); err != nil {
			return bad("durations of %s: %v", k, err)
		}
	}
	switch {
	case clientFaults > 0 && c.Clients < 1:
		return bad("client faults need clients, have %d", c.Clients)
	case c.Counts[ClockStep] > 0 && c.ClockStep.validate() != nil:
		return bad("clock step: %v", c.ClockStep.validate())
	case c.Settle.Min < 0 || c.Settle.Max < c.Settle.Min:
		return bad("settle %v–%v", c.Settle.Min, c.Settle.Max)
	case c.Overlap < 0 || c.Overlap > 1:
		return bad("overlap %v outside [0, 1]", c.Overlap)
	case c.MaxConcurrent < 1:
		return bad("max concurrent %d", c.MaxConcurrent)
	case c.Lead < 0:
		return bad("lead %v", c.Lead)
	}
	return nil
}

func (s Span) validate() error {
	if s.Min <= 0 || s.Max < s.Min {
		return fmt.Errorf("span %v–%v, want 0 < min ≤ max", s.Min, s.Max)
	}
	return nil
}

// Plan draws a schedule from c:
//
//   - the faults of c.Counts in a shuffled order;
//   - each with a duration drawn from its kind's span (rounded to the
//     millisecond, as every drawn time);
//   - with chance c.Overlap a fault starts 20–80% into the previous one,
//     else c.Settle after every fault so far ended;
//   - a fault is then moved later until at most c.MaxConcurrent are
//     active, no other fault acts on its client, and (for server faults
//     and clock steps) no other server fault is active, since a server
//     selector may name the same server for a contender with one;
//   - a client fault hits a client drawn among the free ones.
func Plan(c Config) (Schedule, error) {
	if err := c.validate(); err != nil {
		return Schedule{}, err
	}
	r := newDraw(c.Seed)
	var kinds []Kind
	for _, k := range Kinds {
		for range c.Counts[k] {
			kinds = append(kinds, k)
		}
	}
	for i := len(kinds) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		kinds[i], kinds[j] = kinds[j], kinds[i]
	}

	var faults []Fault
	lastEnd := c.Lead // every fault so far ended by then
	clientFree := make([]time.Duration, c.Clients)
	var serverFree time.Duration
	for i, k := range kinds {
		f := Fault{ID: i + 1, Kind: k, Duration: r.span(c.Durations[k])}
		if i > 0 && r.float() < c.Overlap {
			prev := faults[i-1]
			f.Start = prev.Start + roundMS(time.Duration((0.2+0.6*r.float())*float64(prev.Duration)))
		} else {
			f.Start = lastEnd + r.span(c.Settle)
		}
		switch {
		case clientKind(k):
			if k == ClientPartition {
				f.Direction = ToServer
				if r.intn(2) == 1 {
					f.Direction = FromServer
				}
			}
		default:
			f.Server = 1 + r.intn(1<<16)
			if k == ClockStep {
				f.Step = r.span(c.ClockStep)
			}
		}
		pick := r.float() // the client, among the free ones
		f.Start, f.Client = place(f, faults, c.MaxConcurrent, clientFree, serverFree, pick)
		if clientKind(k) {
			clientFree[f.Client-1] = f.End()
		} else {
			serverFree = f.End()
		}
		lastEnd = max(lastEnd, f.End())
		faults = append(faults, f)
	}
	slices.SortStableFunc(faults, func(a, b Fault) int { return cmp.Compare(a.Start, b.Start) })
	for i := range faults {
		faults[i].ID = i + 1
	}
	return Schedule{Config: c, Faults: faults}, nil
}

// place returns the earliest start no earlier than f.Start at which f
// fits beside the faults so far, and the client it hits (0 for server
// faults): pick in [0, 1) chooses among the clients free then.
func place(f Fault, faults []Fault, maxConcurrent int, clientFree []time.Duration, serverFree time.Duration, pick float64) (time.Duration, int) {
	start := f.Start
	for {
		moved := false
		if !clientKind(f.Kind) && start < serverFree {
			start, moved = serverFree, true
		}
		// Every active fault ends after start; move to the earliest end
		// while too many would be active.
		var ends []time.Duration
		for _, g := range faults {
			if g.Start <= start && start < g.End() {
				ends = append(ends, g.End())
			}
		}
		if len(ends) >= maxConcurrent {
			start, moved = slices.Min(ends), true
		}
		if clientKind(f.Kind) {
			var free []int
			for i, t := range clientFree {
				if t <= start {
					free = append(free, i)
				}
			}
			if len(free) == 0 {
				start, moved = slices.Min(clientFree), true
			} else if !moved {
				return start, free[int(pick*float64(len(free)))] + 1
			}
		}
		if !moved {
			return start, 0
		}
	}
}

// draw derives every random choice from PCG's 64-bit outputs alone, so a
// seed's schedule does not change with math/rand's reductions.
type draw struct{ src *rand.PCG }

func newDraw(seed uint64) *draw {
	// The second PCG word is fixed: the seed alone names a schedule.
	return &draw{src: rand.NewPCG(seed, 0x6e656d65736973)} // "nemesis"
}

// float returns a uniform number in [0, 1) from the top 53 bits.
func (d *draw) float() float64 { return float64(d.src.Uint64()>>11) / (1 << 53) }

// intn returns a uniform integer in [0, n).
func (d *draw) intn(n int) int { return min(int(d.float()*float64(n)), n-1) }

// span returns a duration drawn uniformly from s, rounded to the
// millisecond.
func (d *draw) span(s Span) time.Duration {
	return roundMS(s.Min + time.Duration(d.float()*float64(s.Max-s.Min)))
}

func roundMS(d time.Duration) time.Duration {
	return time.Duration(math.Round(float64(d)/float64(time.Millisecond))) * time.Millisecond
}
