package load

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/workload"
)

// A child that cannot run says why on its stdout, as the parent reads it.
func TestChildMainRefuses(t *testing.T) {
	spec := func(s ProcessSpec) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	good := "{name: w, clients: {count: 4, processes: 2}, keys: 1, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}"
	for _, c := range []struct{ in, want string }{
		{"not json\n", "reading the process spec"},
		{spec(ProcessSpec{Contender: "nope", Source: "w.yaml", Text: good}), `unknown contender "nope"`},
		{spec(ProcessSpec{Contender: "x", Source: "w.yaml", Text: "name: w\n"}), "w.yaml is invalid"},
	} {
		var out bytes.Buffer
		err := ChildMain(context.Background(), []bench.Contender{{Name: "x"}}, strings.NewReader(c.in), &out)
		var m childMsg
		if jerr := json.Unmarshal(out.Bytes(), &m); err == nil || jerr != nil || !strings.Contains(m.Error, c.want) {
			t.Errorf("%q: ChildMain = %v, said %q; want an error saying %q", c.in, err, out.String(), c.want)
		}
	}
}

// The shares of a workload's processes cover its clients exactly once.
func TestShares(t *testing.T) {
	w, _, err := workload.Parse("w.yaml", []byte("{name: w, clients: {count: 10, processes: 3}, keys: 1, arrivals: {loop: closed}, hold: 1ms, lease: 1s, duration: 1s}"))
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for p := range w.Processes {
		s := ShareOf(w, p)
		if s.First != next || s.Count < 3 || s.Process != p || s.Processes != 3 {
			t.Fatalf("share %d: %+v", p, s)
		}
		next += s.Count
	}
	if next != 10 {
		t.Fatalf("the shares cover %d of 10 clients", next)
	}
	// The epoch of another process's clock maps onto this one's.
	// Bounded by the clock readings around the call, not a fixed slack:
	// a loaded machine may deschedule the test between any two of them.
	before := time.Now()
	at := epochAt(monotonic() + int64(time.Second))
	after := time.Now()
	slack := after.Sub(before) + time.Millisecond
	if lo, hi := before.Add(time.Second-slack), after.Add(time.Second+time.Millisecond); at.Before(lo) || at.After(hi) {
		t.Errorf("an epoch 1s ahead on CLOCK_MONOTONIC is %v ahead here, want within [%v, %v] of the call", at.Sub(before), lo.Sub(before), hi.Sub(before))
	}
}
