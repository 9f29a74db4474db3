package workload

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of a workload file.
const (
	// DefaultSeed seeds every random stream when the file names none.
	DefaultSeed = 1
	// quickDivisor shortens duration and warm-up in the quick suite when
	// the file has no quick block.
	quickDivisor = 4
)

// Workload is a user's lock traffic, as a workload file states it. It is
// a value: copies share only read-only tables, and its methods are safe
// for concurrent use.
type Workload struct {
	// Name names the workload in results (the variant of the workload
	// scenario); Description is the file's own words.
	Name, Description string
	// Source is where the workload came from ("ready/job-queue.yaml" or
	// the path given); Text is the file's content, kept for results.json.
	Source, Text string
	// Ready: one of the ready workloads that ship with the bench (Load by
	// its name), not a user's own file.
	Ready bool

	// Clients is the number of clients: each is one worker with its own
	// connections (its own Locker), holding or waiting for one key at a
	// time. Processes spreads them over that many OS processes; 1 (the
	// default) runs them all in the bench process.
	Clients, Processes int
	Keys               Keys
	Arrivals           Arrivals
	// Hold is how long each grant is held.
	Hold Distribution
	// Lease is the lease (monolock) = TTL (Redis, Redlock) of every
	// contender while it runs this workload.
	Lease time.Duration
	// Duration is the measured window, after Warmup (default Duration/10).
	Duration, Warmup time.Duration
	// QuickDuration and QuickWarmup are the quick suite's window: the
	// file's quick block, else a quarter of Duration and Warmup.
	QuickDuration, QuickWarmup time.Duration
	// Seed seeds every random choice (DefaultSeed unless the file says):
	// every contender gets the same arrivals, keys and holds.
	Seed uint64
	// Thresholds are the file's SLOs, checked per contender.
	Thresholds []Threshold

	pos positions
}

// positions are where the fields that warnings point at were written.
type positions struct {
	clients, keys, rate, hold, lease pos
}

type pos struct{ line, col int }

// Window returns the warm-up and the measured duration of a run.
func (w Workload) Window(quick bool) (warmup, duration time.Duration) {
	if quick {
		return w.QuickWarmup, w.QuickDuration
	}
	return w.Warmup, w.Duration
}

// Describe says the workload in plain words, for the report and the CLI.
func (w Workload) Describe() string {
	var b strings.Builder
	b.WriteString(w.Name)
	if w.Description != "" {
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(w.Description))
	}
	b.WriteString("\n")

	clients := countNoun(w.Clients, "client", "clients")
	switch {
	case w.Processes == w.Clients && w.Clients > 1:
		clients += ", each in its own OS process"
	case w.Processes > 1:
		clients += fmt.Sprintf(" spread over %d OS processes", w.Processes)
	}
	if w.Arrivals.Loop == Open {
		how := "at random (Poisson) at " + fmtRate(w.Arrivals.Rate) + " on average"
		if w.Arrivals.Spacing == Constant {
			how = "exactly every " + fmtDuration(seconds(1/w.Arrivals.Rate)) + " (" + fmtRate(w.Arrivals.Rate) + ")"
		}
		fmt.Fprintf(&b, "Requests arrive %s, whatever the lock does; %s serve them, each with its own connections and one request at a time. A request's latency counts from its arrival, so a backlog shows. ", how, clients)
	} else {
		key := "a key"
		if w.Keys.Count == 1 {
			key = "the key"
		}
		fmt.Fprintf(&b, "%s, each with its own connections, loop: acquire %s, hold it, release it", capitalize(clients), key)
		if w.Arrivals.Think.Kind == Fixed && w.Arrivals.Think.Fixed == 0 {
			b.WriteString(", and at once again, as fast as the lock lets them. ")
		} else {
			b.WriteString(", then think (" + w.Arrivals.Think.String() + "). ")
		}
	}
	b.WriteString(w.describeKeys())
	b.WriteString(" Holds: " + w.Hold.String())
	if w.Hold.Kind != Fixed {
		b.WriteString(" (mean " + fmtDuration(roundNice(w.Hold.MeanValue())) + ")")
	}
	b.WriteString("; lease " + fmtDuration(w.Lease) + ".")
	if w.Arrivals.Loop == Open {
		fmt.Fprintf(&b, " About %s of the requests find their key held by another client and wait (per key: rate × its share × mean hold).", percent(w.contendedShare()))
	}
	if p := w.Hold.Exceeds(w.Lease); p > 0 {
		fmt.Fprintf(&b, " %s of the holds outlast the lease: heartbeats or a watchdog must keep the lock.", capitalize(shareWords(p)))
	}
	fmt.Fprintf(&b, "\nMeasured for %s after a %s warm-up (quick suite: %s after %s); seed %d, so every contender gets the same %s.",
		fmtDuration(w.Duration), fmtDuration(w.Warmup), fmtDuration(w.QuickDuration), fmtDuration(w.QuickWarmup), w.Seed,
		map[Loop]string{Open: "arrivals, keys and holds", Closed: "keys, holds and think times per client"}[w.Arrivals.Loop])
	if len(w.Thresholds) > 0 {
		b.WriteString("\nSLOs:")
		for _, t := range w.Thresholds {
			b.WriteString("\n- " + t.describe() + " (" + t.Text + ")")
		}
	}
	return b.String()
}

// contendedShare estimates the share of an open loop's requests that find
// their key held: a key's requests arrive as a Poisson stream (a share of
// a Poisson stream is one), so an arrival finds it held with the
// probability that it is held, its utilisation rate × share × mean hold
// (at most 1).
func (w Workload) contendedShare() float64 {
	hold := w.Hold.MeanValue().Seconds()
	c := w.Keys.Chooser()
	var s float64
	for i := range w.Keys.Count {
		p := c.Share(i)
		s += p * min(1, w.Arrivals.Rate*p*hold)
	}
	return s
}

// ContendedShare estimates the share of requests that find their key held
// by another client (before any time spent acquiring): for an open loop
// as Describe says, for a closed loop from the other clients, each
// holding a key for hold / (hold + think) of its time, that key being k
// with k's share. Zero when no two clients can meet on a key.
func (w Workload) ContendedShare() float64 {
	if w.Clients < 2 {
		return 0
	}
	if w.Arrivals.Loop == Open {
		return w.contendedShare()
	}
	hold, think := w.Hold.MeanValue().Seconds(), w.Arrivals.Think.MeanValue().Seconds()
	busy := 1.0
	if hold+think > 0 {
		busy = hold / (hold + think)
	}
	c := w.Keys.Chooser()
	var s float64
	for i := range w.Keys.Count {
		p := c.Share(i)
		s += p * min(1, float64(w.Clients-1)*busy*p)
	}
	return s
}

// Settings returns the workload's parameters in short form, for the
// settings of results.json (the file's full text is Text).
func (w Workload) Settings(quick bool) map[string]string {
	warmup, duration := w.Window(quick)
	s := map[string]string{
		"workload":  w.Name,
		"source":    w.Source,
		"clients":   strconv.Itoa(w.Clients),
		"processes": strconv.Itoa(w.Processes),
		"keys":      w.Keys.String(),
		"arrivals":  w.Arrivals.String(),
		"hold":      w.Hold.String(),
		"lease":     fmtDuration(w.Lease),
		"warmup":    fmtDuration(warmup),
		"duration":  fmtDuration(duration),
		"seed":      strconv.FormatUint(w.Seed, 10),
	}
	var ts []string
	for _, t := range w.Thresholds {
		ts = append(ts, t.Text)
	}
	if len(ts) > 0 {
		s["thresholds"] = strings.Join(ts, "; ")
	}
	return s
}

func (w Workload) describeKeys() string {
	k := w.Keys
	if k.Count == 1 {
		return "Every request is for the same key."
	}
	s := "Each request picks one of " + countNoun(k.Count, "key", "keys")
	c := k.Chooser()
	switch k.Dist {
	case Zipfian:
		top := min(10, k.Count)
		var share float64
		for i := range top {
			share += c.Share(i)
		}
		s += fmt.Sprintf(", zipfian with theta %g: the most used key gets %s of the requests, the %d most used %s.",
			k.Theta, percent(c.Share(0)), top, percent(share))
	case HotSet:
		s += fmt.Sprintf(": %s of the requests go to a hot set of %s (%s of the keys), the rest spread over the others.",
			percent(k.HotTraffic), countNoun(k.HotCount(), "key", "keys"), percent(k.HotKeys))
	default:
		s += ", all equally likely."
	}
	return s
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
