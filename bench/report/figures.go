package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/monolock/monolock-bench/bench/results"
)

// Contender ids the report knows by role. Other contenders (waiting-strategy
// variants, later lock services) are shown as they come.
const (
	monolock   = "monolock"
	redis      = "redis"
	redlock    = "redlock"
	tcpFloor   = "tcp-floor"
	redisFloor = "redis-floor"
)

// isFloor reports whether a contender is a baseline rather than a lock.
func isFloor(c string) bool { return c == tcpFloor || c == redisFloor }

// figures indexes one run's summary and raw records for lookups by
// scenario, contender, variant and metric.
type figures struct {
	r    *results.Results
	rows map[figureKey]results.Row
	// contenders in display order: the run's contender list with the locks
	// first and the floors last, then any contender only the data names.
	contenders []string
}

type figureKey struct{ scenario, contender, variant, metric string }

func newFigures(r *results.Results) *figures {
	f := &figures{r: r, rows: map[figureKey]results.Row{}}
	var all []string
	add := func(c string) {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	for _, c := range r.Parameters.Contenders {
		add(c)
	}
	for _, x := range r.Summary {
		f.rows[figureKey{x.Scenario, x.Contender, x.Variant, x.Metric}] = x
		add(x.Contender)
	}
	for _, c := range all {
		if !isFloor(c) {
			f.contenders = append(f.contenders, c)
		}
	}
	for _, c := range all {
		if isFloor(c) {
			f.contenders = append(f.contenders, c)
		}
	}
	return f
}

// row returns the summary row of one figure.
func (f *figures) row(scenario, contender, variant, metric string) (results.Row, bool) {
	x, ok := f.rows[figureKey{scenario, contender, variant, metric}]
	return x, ok
}

// scenarioContenders lists the contenders with data in a scenario, in
// display order.
func (f *figures) scenarioContenders(scenario string) []string {
	var out []string
	for _, c := range f.contenders {
		for _, x := range f.r.Summary {
			if x.Scenario == scenario && x.Contender == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// variants lists the variants of a scenario in order of first appearance.
func (f *figures) variants(scenario string) []string {
	var out []string
	for _, x := range f.r.Summary {
		if x.Scenario == scenario && !slices.Contains(out, x.Variant) {
			out = append(out, x.Variant)
		}
	}
	return out
}

// scenarios lists the scenarios in the run's order, then any scenario only
// the data names.
func (f *figures) scenarios() []string {
	var out []string
	for _, s := range f.r.Parameters.Scenarios {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, x := range f.r.Summary {
		if !slices.Contains(out, x.Scenario) {
			out = append(out, x.Scenario)
		}
	}
	return out
}

// raws returns the raw records of one scenario variant and contender in
// repetition order.
func (f *figures) raws(scenario, contender, variant string) []results.Raw {
	var out []results.Raw
	for _, x := range f.r.Raw {
		if x.Scenario == scenario && x.Contender == contender && x.Variant == variant {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b results.Raw) int { return a.Repetition - b.Repetition })
	return out
}

// histogram merges the histograms named name of every repetition of one
// variant and contender; nil when there is none.
func (f *figures) histogram(scenario, contender, variant, name string) (*hdrhistogram.Histogram, string, error) {
	var merged *hdrhistogram.Histogram
	unit := ""
	for _, x := range f.raws(scenario, contender, variant) {
		for _, h := range x.Histograms {
			if h.Name != name {
				continue
			}
			d, err := h.Decode()
			if err != nil {
				return nil, "", fmt.Errorf("report: %w", err)
			}
			if merged == nil {
				merged, unit = d, h.Unit
				continue
			}
			merged.Merge(d)
		}
	}
	return merged, unit, nil
}

// lease returns the lease (monolock) or TTL (Redis contenders) of a
// contender from its recorded settings. A contender whose setting is not a
// duration (e.g. "= lease") gets the run's lease: parity makes it the same
// for every contender, so the first contender that records it as a
// duration gives it.
func (f *figures) lease(contender string) (time.Duration, bool) {
	if d, ok := durationSetting(f.r.Parameters.Contender[contender]); ok {
		return d, true
	}
	names := make([]string, 0, len(f.r.Parameters.Contender))
	for c := range f.r.Parameters.Contender {
		names = append(names, c)
	}
	slices.Sort(names)
	for _, c := range names {
		if d, ok := durationSetting(f.r.Parameters.Contender[c]); ok {
			return d, true
		}
	}
	return 0, false
}

func durationSetting(set results.Settings) (time.Duration, bool) {
	for _, k := range []string{"lease", "ttl"} {
		if d, err := time.ParseDuration(set[k]); err == nil && d > 0 {
			return d, true
		}
	}
	return 0, false
}

// workersOf returns the worker count of a variant named like
// "distinct-w16".
func workersOf(variant string) (int, bool) {
	i := strings.LastIndex(variant, "-w")
	if i < 0 {
		if strings.HasPrefix(variant, "w") {
			i = -1
		} else {
			return 0, false
		}
	}
	n, err := strconv.Atoi(variant[i+2:])
	return n, err == nil && n > 0
}

// num prints a figure with a precision that suits its size: whole numbers
// from 1000 up and for integral values (counts), one decimal from 10,
// three significant digits below.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000 || (v == math.Trunc(v) && a < 1e15):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// spread prints a row as "median (min–max)", or the median alone when
// there is one repetition or no spread.
func spread(x results.Row) string {
	if x.N > 1 && x.Min != x.Max {
		return fmt.Sprintf("%s (%s–%s)", num(x.Median), num(x.Min), num(x.Max))
	}
	return num(x.Median)
}

// withUnit prints a value and its unit the way a reader says it.
func withUnit(v float64, unit string) string {
	switch unit {
	case "", "count", "ratio":
		return num(v)
	case "1/s":
		return num(v) + "/s"
	}
	return num(v) + " " + unit
}

// ratio prints a/b as "1.23×".
func ratio(a, b float64) string {
	if b == 0 {
		return "∞×"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}
