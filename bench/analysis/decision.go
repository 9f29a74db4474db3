package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// A Decision is the verdict of every use case a run answers, under the
// network path the run's first profile measured, and under each other
// profile of a sweep where the locks to use change: a pick over loopback
// need not hold over a lossy link.
type Decision struct {
	// Scope says first which network path the verdicts hold for, and,
	// for a sweep, which other profiles were compared.
	Scope string
	Cases []Case
}

// A Case is one use case's verdict under the run's first profile and,
// in Profiles, under each other profile where the pick differs.
type Case struct {
	Advice
	Profiles []AtProfile
}

// AtProfile is a use case's verdict under one other network profile.
type AtProfile struct {
	Profile string
	Advice
}

// Verdicts decides every use case of UseCases for r: under its first
// network profile, then under each other profile of a sweep, keeping
// those where the locks to use differ from the first's. A use case a
// profile did not measure all of (its requirements, its deciding
// figure) is not decided there: a sweep runs a few scenarios only.
func Verdicts(r *results.Results) Decision {
	first := New(r.FirstNetwork())
	var d Decision
	for _, u := range UseCases {
		if p, ok := first.Decide(u); ok {
			d.Cases = append(d.Cases, Case{Advice: first.Advise(p)})
		}
	}
	if len(r.Networks) < 2 {
		path := r.Environment.NetworkPath
		if len(r.Networks) == 1 {
			path = pathOf(r.Networks[0])
		}
		d.Scope = fmt.Sprintf("Verdicts for one network path, %s; a longer or lossier path may change them (a sweep, --networks, shows where).", path)
		return d
	}
	var others []string
	for _, nr := range r.Networks[1:] {
		others = append(others, nr.Profile)
		at := New(r.UnderNetwork(nr.Label()))
		at.matrix = first // capabilities are named as the first profile's matrix names them
		for i, c := range d.Cases {
			p, ok := at.Decide(c.UseCase)
			if !ok || !at.answers(p) {
				continue
			}
			if a := at.Advise(p); !sameLocks(a.Use, c.Use) {
				d.Cases[i].Profiles = append(d.Cases[i].Profiles, AtProfile{Profile: nr.Profile, Advice: a})
			}
		}
	}
	d.Scope = fmt.Sprintf("Verdicts for the first network profile of this run, %s (%s); under %s the pick is given where it changes (“at %s”), and is the same elsewhere.",
		r.Networks[0].Profile, pathOf(r.Networks[0]), strings.Join(others, ", "), others[0])
	return d
}

// pathOf is a profile's network path in words.
func pathOf(nr results.NetworkRun) string {
	if nr.NetworkPath == "" {
		return nr.Profile
	}
	return nr.NetworkPath
}

// answers reports whether the run measured what a pick rests on: every
// required capability for some lock, and the deciding figure when the
// use case ranks.
func (run *Run) answers(p Pick) bool {
	for _, id := range p.Required {
		if !run.measuredAnywhere(id) {
			return false
		}
	}
	return len(p.Rank) == 0 || p.Deciding != nil
}

// sameLocks reports whether two picks name the same locks, in any order.
func sameLocks(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return strings.Join(a, ",") == strings.Join(b, ",")
}
