package analysis

import (
	"github.com/monolock/monolock-bench/bench/results"
)

// A FailoverVariant is one variant of the failover scenario as the
// report reads it: whether it is the unfenced deployment (no fault, so
// no availability to compare) or a standby pair's (a lock measured D,
// the detection and switch), the locks' unavailability ranked shortest
// first (none for the unfenced one), the double grants, how the
// address moved, and every lock's figures.
type FailoverVariant struct {
	Variant              string
	Unfenced, Detection  bool
	Unavailable          []Entry
	DoubleGrants         []Quoted
	VirtualIP, Forwarder bool
	Locks                []FailoverLock
}

// FailoverLock is one lock's figures in a failover variant, nil where
// not measured (a figure under its old name counts), and the grants per
// 100 ms and fault marks of its first repetition, for the chart.
type FailoverLock struct {
	Contender                                     string
	Unavailable, Detection, Recovery, DoubleGrant *results.Row
	ZeroGrant, FailedAttempts, LostHolders        *results.Row
	TokensMonotonic, AcquireP99, ReleaseP99       *results.Row
	Grants, FaultMarks                            []float64
}

// Failover reads every variant of the failover scenario in order of
// first appearance, over its locks.
func (run *Run) Failover() []FailoverVariant {
	const s = "failover"
	fm := results.FailoverMetrics
	locks := run.locksIn(s)
	var out []FailoverVariant
	for _, v := range run.variants(s) {
		fv := FailoverVariant{Variant: v, Unfenced: run.params(s, v).Fault == results.FaultSwitchNoFence,
			DoubleGrants: run.Quote(s, v, fm.DoubleGrants.Name, locks)}
		if !fv.Unfenced {
			fv.Unavailable = run.RankFigure(s, v, fm.UnavailableMs.Name, locks, false)
		}
		for _, c := range locks {
			get := func(m results.MetricSpec, old string) *results.Row {
				if x, ok := run.row(s, c, v, m.Name); ok {
					return &x
				}
				if x, ok := run.row(s, c, v, old); ok && old != "" {
					return &x
				}
				return nil
			}
			l := FailoverLock{Contender: c,
				Unavailable: get(fm.UnavailableMs, ""), Detection: get(fm.DetectionMs, "d_ms"), Recovery: get(fm.RecoveryMs, ""),
				DoubleGrant: get(fm.DoubleGrants, ""), ZeroGrant: get(fm.ZeroGrantMs, ""), FailedAttempts: get(fm.FailedAttempts, ""),
				LostHolders: get(fm.LostHolders, ""), TokensMonotonic: get(fm.TokensMonotonic, ""),
				AcquireP99: get(fm.AcquireP99DuringFault, ""), ReleaseP99: get(fm.ReleaseP99DuringFault, "")}
			raws := run.raws[rawKey{s, c, v}]
			for _, x := range raws {
				switch {
				case x.Counts["address_move_virtual_ip"] > 0 && !fv.VirtualIP:
					fv.VirtualIP = true
				case x.Counts["address_move_forwarder"] > 0:
					fv.Forwarder = true
				}
			}
			if len(raws) > 0 {
				l.Grants, l.FaultMarks = seriesValues(raws[0], "grants_per_100ms"), seriesValues(raws[0], "fault_marks")
			}
			fv.Detection = fv.Detection || l.Detection != nil
			fv.Locks = append(fv.Locks, l)
		}
		out = append(out, fv)
	}
	return out
}

// seriesValues returns the values of raw's series called name, or nil.
func seriesValues(raw results.Raw, name string) []float64 {
	for _, x := range raw.Series {
		if x.Name == name {
			return x.Values
		}
	}
	return nil
}
