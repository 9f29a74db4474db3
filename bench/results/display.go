package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Display is how a reader sees figures stored in one unit of results.json:
// the unit chosen for their magnitude (µs, ms or s; B, KiB or MiB) and the
// factor from the stored unit. results.json keeps its ASCII unit names;
// only what a reader sees changes.
type Display struct {
	Unit   string // as a reader sees it: "µs", "ms", "s", "/s", "KiB", "" (counts, ratios)
	factor float64
}

// The time and size units a display may choose, smallest first, with
// their size in seconds or bytes.
var (
	timeUnits = []struct {
		name string
		size float64
	}{{"µs", 1e-6}, {"ms", 1e-3}, {"s", 1}}
	sizeUnits = []struct {
		name string
		size float64
	}{{"B", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}}
	storedTime = map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1}
)

// DisplayFor picks the display of figures stored in unit so that every
// one of values (a table column, a chart axis, a sentence) reads in the
// same unit: the largest unit in which the largest magnitude is at least
// 1 (2393158 us reads as 2.39 s, 850 us as 850 µs), smaller where the
// smallest figure would need more than two leading zeros. Rates ("1/s") read as
// "/s", CPU time per second ("ms/s") stays, counts, ratios and verdicts
// have no unit, and an unknown unit is shown as stored.
func DisplayFor(unit string, values ...float64) Display {
	top, bottom := 0.0, math.Inf(1)
	for _, v := range values {
		if a := math.Abs(v); !math.IsInf(a, 0) && !math.IsNaN(a) {
			top = max(top, a)
			if a > 0 {
				bottom = min(bottom, a)
			}
		}
	}
	if size, ok := storedTime[unit]; ok {
		return pick(top*size, bottom*size, size, timeUnits)
	}
	switch unit {
	case "bytes":
		return pick(top, bottom, 1, sizeUnits)
	case "", "count", "ratio", "bool":
		return Display{factor: 1}
	case "1/s":
		return Display{Unit: "/s", factor: 1}
	}
	return Display{Unit: unit, factor: 1}
}

// pick returns the largest of units in which top (in the units' base) is
// at least 1, the smallest when top is below all, then a smaller one
// while the smallest figure, bottom, would read below 0.01 there and the
// largest stays under 100,000 (a column of 0.49 ms and 2114 ms reads in
// ms, not as 0.000489 s); stored is the size of the stored unit in that
// base.
func pick(top, bottom, stored float64, units []struct {
	name string
	size float64
}) Display {
	i := 0
	for j := range units {
		// All zero: the stored unit (0 ms, not 0 µs).
		if top >= units[j].size || top == 0 && units[j].size == stored {
			i = j
		}
	}
	for i > 0 && bottom/units[i].size < 0.01 && top/units[i-1].size < 1e5 {
		i--
	}
	return Display{Unit: units[i].name, factor: stored / units[i].size}
}

// Value converts v from the stored unit into this display's unit (for a
// chart's axis).
func (d Display) Value(v float64) float64 { return v * d.factor }

// Num prints v (in the stored unit) as a number in this display's unit.
func (d Display) Num(v float64) string {
	shown := v * d.factor
	if d.factor != 1 && shown != 0 {
		// drop the float noise of the conversion (0.25 ms × 1000 =
		// 250.00000000000003 µs) so integral values print whole
		shown, _ = strconv.ParseFloat(strconv.FormatFloat(shown, 'g', 12, 64), 64)
	}
	return Num(shown)
}

// Format prints v (in the stored unit) with this display's unit: "2.39 s",
// "1200/s", "17".
func (d Display) Format(v float64) string {
	switch d.Unit {
	case "":
		return d.Num(v)
	case "/s":
		return d.Num(v) + "/s"
	}
	return d.Num(v) + " " + d.Unit
}

// Format prints one figure stored in unit the way a reader says it, in
// the unit that suits its magnitude.
func Format(v float64, unit string) string { return DisplayFor(unit, v).Format(v) }

// Num prints a figure with a precision that suits its size: whole numbers
// from 1000 up and for integral values (counts), with thousands
// separated ("19,734"), one decimal from 10, three significant digits
// below (without an exponent down to 0.0001). It is the one number
// formatter of what a reader sees: report, compare and the end-of-run
// summary print through it.
func Num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case math.IsInf(v, 0) || math.IsNaN(v):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case a >= 1000 || (v == math.Trunc(v) && a < 1e15):
		return thousands(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1e-4:
		// three significant digits in fixed notation
		digits := 2 - int(math.Floor(math.Log10(a)))
		return strconv.FormatFloat(v, 'f', digits, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// Tick prints a chart axis's tick value: the shortest form that reads
// back as the tick (0.25, not 0.250), without the float noise of the
// ticker's steps (-0.8, not -0.8000000000000002), thousands separated as
// Num does.
func Tick(v float64) string {
	if v == 0 {
		return "0" // not "-0"
	}
	clean, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	s := strconv.FormatFloat(clean, 'f', -1, 64)
	whole, frac, ok := strings.Cut(s, ".")
	if ok {
		return thousands(whole) + "." + frac
	}
	return thousands(whole)
}

// thousands separates the thousands of a whole number's digits:
// "-19734" reads "-19,734".
func thousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Span prints a figure's repetitions as one reads them: the median with
// its unit and the range with n, "121.8 µs (114.1–127.0, n=3)", or
// "17 (n=1)"; a yes/no figure (unit bool) as how many repetitions said
// yes, "1 of 2", never as a median of 0.500.
func Span(vals []float64, unit string) string {
	if len(vals) == 0 {
		return "not measured"
	}
	if unit == "bool" {
		yes := 0
		for _, v := range vals {
			if v != 0 {
				yes++
			}
		}
		return fmt.Sprintf("%d of %d", yes, len(vals))
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	lo, hi, m := sorted[0], sorted[len(sorted)-1], Median(sorted)
	show := DisplayFor(unit, m, lo, hi)
	if len(vals) > 1 && show.Num(lo) != show.Num(hi) {
		return fmt.Sprintf("%s (%s–%s, n=%d)", show.Format(m), show.Num(lo), show.Num(hi), len(vals))
	}
	return fmt.Sprintf("%s (n=%d)", show.Format(m), len(vals))
}

// Ratio prints a/b as "1.23×", with fewer decimals for large ratios.
func Ratio(a, b float64) string {
	if b == 0 {
		return "∞×"
	}
	r, prec := a/b, 2
	switch {
	case math.Abs(r) >= 100:
		prec = 0
	case math.Abs(r) >= 10:
		prec = 1
	}
	return strconv.FormatFloat(r, 'f', prec, 64) + "×"
}
