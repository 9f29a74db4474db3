package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// DistKind names the shape of a Distribution.
type DistKind int

// The shapes of a duration distribution.
const (
	// Fixed is always Distribution.Fixed.
	Fixed DistKind = iota
	// Uniform is uniform on [Min, Max] (whole nanoseconds).
	Uniform
	// Exponential has mean Mean, capped at Max when Max > 0.
	Exponential
	// Percentiles passes through the given Points; see Distribution.
	Percentiles
)

// Point is one given percentile of a Percentiles distribution.
type Point struct {
	// Percentile is strictly between 0 and 100 (99.9 for p999).
	Percentile float64
	Value      time.Duration
}

// Distribution is a distribution of durations: hold times and think
// times. A Distribution is a value; its methods are safe for concurrent
// use (the state of a draw is the *rand.Rand passed in).
//
// A Percentiles distribution is interpolated on a log-normal scale: each
// point (p, v) is placed at z = Φ⁻¹(p/100), the standard normal quantile,
// and y = ln v; a draw takes Z from the standard normal and returns
// exp(y(Z)), with y linear in z between neighbouring points and extended
// beyond the outermost points with the slope of the outermost segment.
// With two points this is exactly the log-normal distribution through
// them (p50 = 20ms, p99 = 200ms gives median 20ms, σ = ln 10 / 2.326);
// with more points it is a piecewise log-normal that passes through every
// one. Why: hold times are positive and right-skewed, and the log-normal
// is the usual model of service times; a linear interpolation of the
// values would need invented p0 and p100 and would put a hard edge at
// the last given percentile. Min and Max, when set, clamp the draws (the
// tails beyond the given points are otherwise unbounded).
type Distribution struct {
	Kind DistKind
	// Fixed is the value of a Fixed distribution.
	Fixed time.Duration
	// Min and Max bound Uniform; they clamp Percentiles when non-zero;
	// Max caps Exponential when non-zero.
	Min, Max time.Duration
	// Mean is the mean of Exponential before any cap.
	Mean time.Duration
	// Points are the percentiles of Percentiles, ascending.
	Points []Point
}

// Sample draws one duration using r.
func (d Distribution) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case Uniform:
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case Exponential:
		return d.capped(seconds(r.ExpFloat64() * d.Mean.Seconds()))
	case Percentiles:
		return d.capped(seconds(math.Exp(d.logValueAt(r.NormFloat64()))))
	}
	return d.Fixed
}

// Quantile returns the value below which a share q (0 < q < 1) of the
// draws fall.
func (d Distribution) Quantile(q float64) time.Duration {
	switch d.Kind {
	case Uniform:
		return d.Min + time.Duration(q*float64(d.Max-d.Min))
	case Exponential:
		return d.capped(seconds(-math.Log1p(-q) * d.Mean.Seconds()))
	case Percentiles:
		return d.capped(seconds(math.Exp(d.logValueAt(normalQuantile(q)))))
	}
	return d.Fixed
}

// Exceeds returns the share of draws longer than t.
func (d Distribution) Exceeds(t time.Duration) float64 {
	switch d.Kind {
	case Uniform:
		if d.Max == d.Min {
			return boolShare(d.Min > t)
		}
		return math.Min(1, math.Max(0, float64(d.Max-t)/float64(d.Max-d.Min)))
	case Exponential:
		if d.Max > 0 && t >= d.Max {
			return 0
		}
		return math.Min(1, math.Exp(-t.Seconds()/d.Mean.Seconds()))
	case Percentiles:
		if d.Max > 0 && t >= d.Max {
			return 0
		}
		if t < d.Min || t <= 0 {
			return 1
		}
		return 1 - normalCDF(d.zAtLogValue(math.Log(t.Seconds())))
	}
	return boolShare(d.Fixed > t)
}

// MeanValue returns the mean of the draws (caps and clamps included). For
// Percentiles it is integrated numerically.
func (d Distribution) MeanValue() time.Duration {
	switch d.Kind {
	case Uniform:
		return (d.Min + d.Max) / 2
	case Exponential:
		m := d.Mean.Seconds()
		if d.Max > 0 {
			m *= -math.Expm1(-d.Max.Seconds() / m)
		}
		return seconds(m)
	case Percentiles:
		return seconds(d.percentileMean())
	}
	return d.Fixed
}

// String describes d in a few words: "20ms", "uniform 20ms–200ms",
// "exponential, mean 50ms", "p50 20ms, p99 200ms".
func (d Distribution) String() string {
	switch d.Kind {
	case Uniform:
		return fmt.Sprintf("uniform %s–%s", fmtDuration(d.Min), fmtDuration(d.Max))
	case Exponential:
		s := "exponential, mean " + fmtDuration(d.Mean)
		if d.Max > 0 {
			s += ", at most " + fmtDuration(d.Max)
		}
		return s
	case Percentiles:
		var parts []string
		for _, p := range d.Points {
			parts = append(parts, percentileName(p.Percentile)+" "+fmtDuration(p.Value))
		}
		if d.Min > 0 {
			parts = append(parts, "at least "+fmtDuration(d.Min))
		}
		if d.Max > 0 {
			parts = append(parts, "at most "+fmtDuration(d.Max))
		}
		return strings.Join(parts, ", ")
	}
	return fmtDuration(d.Fixed)
}

func (d Distribution) capped(v time.Duration) time.Duration {
	if d.Max > 0 && v > d.Max {
		v = d.Max
	}
	if v < d.Min {
		v = d.Min
	}
	return v
}

// logValueAt is y(z), the log of the value (in seconds) at normal score z
// of a Percentiles distribution.
func (d Distribution) logValueAt(z float64) float64 {
	zs, ys := d.knots()
	n := len(zs)
	i := 0 // the segment [i, i+1] that holds z, or the outermost one
	for i < n-2 && z > zs[i+1] {
		i++
	}
	return ys[i] + (z-zs[i])*(ys[i+1]-ys[i])/(zs[i+1]-zs[i])
}

// zAtLogValue is the largest z with y(z) <= y (−Inf when none, +Inf when
// every z has), so that P(value > e^y) = 1 − Φ(z).
func (d Distribution) zAtLogValue(y float64) float64 {
	zs, ys := d.knots()
	n := len(zs)
	if y < ys[0] {
		slope := (ys[1] - ys[0]) / (zs[1] - zs[0])
		if slope == 0 {
			return math.Inf(-1)
		}
		return zs[0] - (ys[0]-y)/slope
	}
	i := 0 // the last knot with ys[i] <= y
	for i < n-1 && ys[i+1] <= y {
		i++
	}
	if i == n-1 {
		slope := (ys[n-1] - ys[n-2]) / (zs[n-1] - zs[n-2])
		if slope == 0 {
			return math.Inf(1)
		}
		return zs[n-1] + (y-ys[n-1])/slope
	}
	return zs[i] + (y-ys[i])*(zs[i+1]-zs[i])/(ys[i+1]-ys[i])
}

// knots returns the points of a Percentiles distribution as normal scores
// and log values (seconds).
func (d Distribution) knots() (zs, ys []float64) {
	zs = make([]float64, len(d.Points))
	ys = make([]float64, len(d.Points))
	for i, p := range d.Points {
		zs[i] = normalQuantile(p.Percentile / 100)
		ys[i] = math.Log(p.Value.Seconds())
	}
	return zs, ys
}

// percentileMean integrates the clamped value against the normal density
// over z in [−9, 9] (Simpson's rule; the mass beyond is below 1e-18).
func (d Distribution) percentileMean() float64 {
	const lo, hi, steps = -9.0, 9.0, 3600
	f := func(z float64) float64 {
		v := math.Exp(d.logValueAt(z))
		if d.Max > 0 {
			v = math.Min(v, d.Max.Seconds())
		}
		v = math.Max(v, d.Min.Seconds())
		return v * math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	}
	h := (hi - lo) / steps
	sum := f(lo) + f(hi)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

// normalQuantile is Φ⁻¹(q), the standard normal quantile.
func normalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// normalCDF is Φ(z).
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func seconds(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(s * 1e9))
}

func boolShare(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// percentileName writes p as a field name: 50 → "p50", 99.9 → "p99.9".
func percentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}
