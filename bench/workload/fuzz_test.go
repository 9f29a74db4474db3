package workload

import (
	"errors"
	"testing"
)

// FuzzParse: any input gives a workload or an *Error whose problems all
// have a message, never a panic; a workload parsed can be described and
// sampled.
func FuzzParse(f *testing.F) {
	for _, name := range Ready() {
		data, err := readyFiles.ReadFile("ready/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(doc(map[string]string{"hold": "hold: {p50: 20ms, p99: 200ms, max: 1s}"})))
	f.Add([]byte(doc(map[string]string{"keys": "keys: {count: 100, distribution: hot-set, hot_keys: 1%, hot_traffic: 90%}"})))
	f.Add([]byte(`{"name": "j", "clients": 2, "keys": 1, "arrivals": {"loop": "closed"}, "hold": "0s", "lease": "1s", "duration": "1s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, _, err := parse("f.yaml", data, limits{openFiles: 1000})
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("error %v is not an *Error with problems", err)
			}
			for _, p := range perr.Problems {
				if p.Msg == "" {
					t.Fatalf("a problem without a message: %+v", p)
				}
			}
			return
		}
		_ = w.Describe()
		_ = w.Settings(true)
		w.CheckRate(1)
		if w.Arrivals.Loop == Open {
			s := w.Schedule()
			for range 10 {
				if r := s.Next(); r.Key < 0 || r.Key >= w.Keys.Count || r.Hold < 0 {
					t.Fatalf("request %+v out of range", r)
				}
			}
		}
		c := w.Client(0)
		for range 10 {
			if s := c.Next(); s.Key < 0 || s.Key >= w.Keys.Count || s.Hold < 0 || s.Think < 0 {
				t.Fatalf("step %+v out of range", s)
			}
		}
	})
}
