package workload

import (
	"math"
	"testing"
	"time"
)

func mustParse(t *testing.T, over map[string]string, extra ...string) Workload {
	t.Helper()
	w, _, err := parse("w.yaml", []byte(doc(over, extra...)), limits{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestPoissonSchedule(t *testing.T) {
	w := mustParse(t, map[string]string{
		"arrivals": "arrivals: {loop: open, rate: 300/s}", "keys": "keys: {count: 50, distribution: zipfian}",
		"hold": "hold: {exponential: {mean: 20ms}}",
	})
	const n = 100_000
	s := w.Schedule()
	var gaps []float64
	var holds []time.Duration
	keys := make([]int, 50)
	prev := s.Next()
	if prev.Due != 0 || prev.Index != 0 {
		t.Errorf("first request %+v, want due 0", prev)
	}
	for i := 1; i < n; i++ {
		r := s.Next()
		if r.Index != int64(i) || r.Due < prev.Due {
			t.Fatalf("request %d: %+v after %+v", i, r, prev)
		}
		gaps = append(gaps, (r.Due - prev.Due).Seconds())
		holds = append(holds, r.Hold)
		keys[r.Key]++
		prev = r
	}
	// Exponential gaps: mean 1/rate (standard error 0.32%), coefficient of
	// variation 1.
	m, sd := meanSD(gaps)
	if !within(m, 1.0/300, 0.02) || !within(sd/m, 1, 0.03) {
		t.Errorf("gaps: mean %v, cv %v; want %v and 1", m, sd/m, 1.0/300)
	}
	// Counts per second: Poisson, variance = mean (index of dispersion 1).
	var perSecond []float64
	cur, c := time.Duration(0), 0.0
	for _, g := range gaps {
		cur += time.Duration(g * 1e9)
		for cur >= time.Second*time.Duration(len(perSecond)+1) {
			perSecond = append(perSecond, c)
			c = 0
		}
		c++
	}
	cm, csd := meanSD(perSecond)
	if !within(cm, 300, 0.02) || !within(csd*csd/cm, 1, 0.25) {
		t.Errorf("arrivals per second: mean %v, dispersion %v; want 300 and 1", cm, csd*csd/cm)
	}
	if got := mean(holds); !within(got, 0.020, 0.02) {
		t.Errorf("hold mean %v, want 20ms", got)
	}
	if x2 := chiSquare(keys, w.Keys.Chooser(), n-1); x2 > 90 { // 49 degrees of freedom: 0.999 quantile ≈ 85.4
		t.Errorf("keys: chi-square %.1f", x2)
	}
}

func TestConstantSchedule(t *testing.T) {
	w := mustParse(t, map[string]string{"arrivals": "arrivals: {loop: open, rate: 300/s, spacing: constant}"})
	s := w.Schedule()
	for i := range 1_000_000 {
		r := s.Next()
		want := time.Duration(math.Round(float64(i) * 1e9 / 300))
		if r.Due != want {
			t.Fatalf("request %d due %v, want %v (no drift)", i, r.Due, want)
		}
	}
}

func TestScheduleDeterministic(t *testing.T) {
	over := map[string]string{"keys": "keys: {count: 1000, distribution: zipfian}", "hold": "hold: {p50: 1ms, p99: 10ms}"}
	a, b := mustParse(t, over).Schedule(), mustParse(t, over).Schedule()
	other := mustParse(t, over, "seed: 2").Schedule()
	same := true
	for range 1000 {
		x, y, z := a.Next(), b.Next(), other.Next()
		if x != y {
			t.Fatalf("one seed, two schedules: %+v and %+v", x, y)
		}
		same = same && x == z
	}
	if same {
		t.Error("seeds 1 and 2 gave the same schedule")
	}
}

func TestClientPlans(t *testing.T) {
	w := mustParse(t, map[string]string{
		"arrivals": "arrivals: {loop: closed, think: {exponential: {mean: 5ms}}}", "hold": "hold: {uniform: {min: 1ms, max: 3ms}}",
		"keys": "keys: 20",
	})
	a, again, b := w.Client(0), w.Client(0), w.Client(1)
	const n = 100_000
	var thinks, holds []time.Duration
	differ := false
	for range n {
		s, s2, o := a.Next(), again.Next(), b.Next()
		if s != s2 {
			t.Fatalf("client 0 twice: %+v and %+v", s, s2)
		}
		differ = differ || s != o
		thinks, holds = append(thinks, s.Think), append(holds, s.Hold)
		if s.Key < 0 || s.Key >= 20 {
			t.Fatalf("key %d out of 20", s.Key)
		}
	}
	if !differ {
		t.Error("clients 0 and 1 drew the same steps: each client must choose its own keys")
	}
	if got := mean(thinks); !within(got, 0.005, 0.02) {
		t.Errorf("think mean %v, want 5ms", got)
	}
	if got := mean(holds); !within(got, 0.002, 0.01) {
		t.Errorf("hold mean %v, want 2ms", got)
	}
	// An open loop's client plan (the closed-loop maximum) does not think.
	if s := mustParse(t, nil).Client(3).Next(); s.Think != 0 {
		t.Errorf("open-loop plan thinks %v", s.Think)
	}
	defer func() {
		if recover() == nil {
			t.Error("Schedule of a closed loop did not panic")
		}
	}()
	w.Schedule()
}

func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}
