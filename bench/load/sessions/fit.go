package sessions

import (
	"errors"
	"fmt"
	"math"
)

// PerSession is the memory a session adds: (atC − empty) / c. It may be
// negative when the sessions fit in memory the empty server had already
// reserved; c must be positive.
func PerSession(empty, atC uint64, c int) float64 {
	if c <= 0 {
		return math.NaN()
	}
	return (float64(atC) - float64(empty)) / float64(c)
}

// Point is one measurement: Y (bytes, CPU seconds per second, …) at X
// sessions.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Line is a least-squares fit Y = Intercept + Slope·X.
type Line struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	// R2 is the coefficient of determination; 1 when every point lies on
	// the line (also when all Y are equal).
	R2 float64 `json:"r2"`
	N  int     `json:"n"`
}

// ErrTooFewPoints is returned by Fit for fewer than two distinct X.
var ErrTooFewPoints = errors.New("sessions: a slope needs points at two or more distinct session counts")

// Fit returns the ordinary least-squares line through points. With memory
// sampled at several C, Slope is the bytes per session and Intercept the
// empty server; the slope is less sensitive than one (atC − empty)/C to a
// single noisy sample.
func Fit(points []Point) (Line, error) {
	n := float64(len(points))
	var mx, my float64
	for _, p := range points {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return Line{}, fmt.Errorf("sessions: point %+v is not finite", p)
		}
		mx += p.X
		my += p.Y
	}
	if len(points) < 2 {
		return Line{}, ErrTooFewPoints
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for _, p := range points {
		dx, dy := p.X-mx, p.Y-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return Line{}, ErrTooFewPoints
	}
	l := Line{Slope: sxy / sxx, N: len(points)}
	l.Intercept = my - l.Slope*mx
	l.R2 = 1
	if syy > 0 {
		l.R2 = sxy * sxy / (sxx * syy)
	}
	return l, nil
}
