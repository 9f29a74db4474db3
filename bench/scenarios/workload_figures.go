package scenarios

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aclements/go-moremath/stats"

	"github.com/monolock/monolock-bench/bench/load"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/bench/workload"
)

// workloadRecord computes a repetition's figures from its event log and
// the edge reads, and checks the workload's thresholds on them. maxRate
// is the contender's calibrated closed-loop maximum (0 for a closed
// loop); notes are the repetition's warnings.
func workloadRecord(w workload.Workload, log *load.Log, e *edges, maxRate float64, notes []string) (results.Raw, error) {
	t := log.Tally()
	span := log.Span().Seconds()
	fromIntended, fromCall, waits := log.FromIntended(), log.FromCall(), log.ContendedWaits()
	var hists []results.Histogram
	for _, h := range []struct {
		name string
		h    *hdrhistogram.Histogram
	}{{"acquire_from_call", fromCall}, {"acquire_from_intended", fromIntended}, {"wait_contended", waits}} {
		rh, err := results.NewHistogram(h.name, "ns", h.h)
		if err != nil {
			return results.Raw{}, err
		}
		hists = append(hists, rh)
	}

	wm := results.WorkloadMetrics
	values := map[string]float64{workload.ValueRequests: float64(t.Requests)}
	why := map[string]string{}
	raw := results.Raw{
		Seconds:    span,
		Histograms: hists,
		Errors:     log.Errors,
		Warnings:   notes,
		Counts: map[string]int64{
			"requests": t.Requests, "granted": t.Granted, "failed": t.Failed, "gave_up": t.GaveUp,
			"censored": t.Censored, "unstarted": t.Unstarted, "cut_holds": t.Cut, "lost": t.Lost,
			"release_failures": t.ReleaseFailed, "clients": int64(w.Clients), "processes": int64(w.Processes),
		},
	}
	add := func(m results.MetricSpec, v float64) {
		raw.Metrics = append(raw.Metrics, m.Of(v))
		values[m.Name] = v
	}
	grantsInWindow := log.GrantsBetween(log.Start, log.End)
	raw.Counts["window_grants"] = grantsInWindow
	raw.Counts["backlog_at_start"] = log.BacklogAt(log.Start)
	add(wm.OfferedPerSec, float64(t.Requests)/span)
	add(wm.AchievedPerSec, float64(grantsInWindow)/span)
	if fromIntended.TotalCount() > 0 {
		add(wm.AcquireP50, us(fromIntended.ValueAtQuantile(50)))
		add(wm.AcquireP99, us(fromIntended.ValueAtQuantile(99)))
		add(wm.AcquireP999, us(fromIntended.ValueAtQuantile(99.9)))
	} else {
		for _, m := range []results.MetricSpec{wm.AcquireP50, wm.AcquireP99, wm.AcquireP999} {
			why[m.Name] = "no measured request was granted"
		}
	}
	if waits.TotalCount() > 0 {
		add(wm.WaitP99, ms(time.Duration(waits.ValueAtQuantile(99))))
	} else {
		why[wm.WaitP99.Name] = "no measured request found its key held or queued for"
	}
	add(wm.Failures, float64(t.Failed))
	add(wm.LostLocks, float64(t.Lost))
	raw.Counts["wait_contended"] = waits.TotalCount()
	if hs := log.Handovers(log.Start, log.End); len(hs) > 0 {
		v := make([]float64, len(hs))
		for i, h := range hs {
			v[i] = ms(h)
		}
		slices.Sort(v)
		add(wm.HandoverP50, stats.Sample{Xs: v, Sorted: true}.Quantile(0.5))
		add(wm.HandoverP99, stats.Sample{Xs: v, Sorted: true}.Quantile(0.99))
		raw.Counts["handovers"] = int64(len(hs))
	}

	// Per lock: what the edges read, over the grants between them.
	a, b := e.at[load.WindowStart], e.at[load.WindowEnd]
	locks := log.GrantsBetween(log.Edges[load.WindowStart], log.Edges[load.WindowEnd])
	raw.Counts["edge_grants"] = locks
	source := "unavailable (external server)"
	if a.serverOK && b.serverOK {
		source = a.source
	}
	raw.CPU = &results.CPU{ServerMS: ms(b.serverCPU - a.serverCPU), ServerSource: source, ClientMS: ms(b.selfCPU - a.selfCPU)}
	switch {
	case locks == 0:
		why[wm.ServerCPUMsPer1k.Name] = "no grant between the window's edges"
	case a.serverOK && b.serverOK:
		add(wm.ServerCPUMsPer1k, ms(b.serverCPU-a.serverCPU)*1000/float64(locks))
	default:
		why[wm.ServerCPUMsPer1k.Name] = "the backend cannot read the servers' CPU"
	}
	if locks > 0 {
		add(wm.ClientCPUMsPer1k, ms(b.selfCPU-a.selfCPU)*1000/float64(locks))
		if e.coord != nil {
			cmds := b.counts.Commands - a.counts.Commands
			raw.Counts["server_commands"] = cmds
			add(wm.CommandsPerLock, float64(cmds)/float64(locks))
		}
	}
	if maxRate > 0 {
		add(wm.ClosedLoopMaxPerSec, maxRate)
	}

	if len(w.Thresholds) > 0 {
		pass := 1.0
		for _, th := range w.Thresholds {
			v := th.Check(values)
			if !v.Known && v.Why != workload.NoRequest && why[th.Metric] != "" {
				v.Why = why[th.Metric]
			}
			unit, _ := metricUnit(th.Metric)
			if th.Relative {
				unit = "ratio"
			}
			raw.Verdicts = append(raw.Verdicts, results.Verdict{
				Threshold: th.Text, Metric: th.Metric, Value: v.Value, Unit: unit, Known: v.Known, Pass: v.Pass, Why: v.Why,
			})
			if !v.Known || !v.Pass {
				pass = 0
			}
		}
		add(wm.SLOPass, pass)
	}
	// A window whose requests all wait past its end (a queue deeper than
	// the run) is a measurement; a run without a single grant is not.
	if log.GrantsBetween(0, math.MaxInt64) == 0 {
		return raw, fmt.Errorf("no request granted in the run (%d measured: %d failed, %d censored): %v", t.Requests, t.Failed, t.Censored, log.Errors)
	}
	return raw, nil
}

// metricUnit is the results unit of a workload metric.
func metricUnit(name string) (string, bool) {
	for _, m := range results.WorkloadMetrics.List() {
		if m.Name == name {
			return m.Unit, true
		}
	}
	return "", false
}
