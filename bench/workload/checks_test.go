package workload

import (
	"strings"
	"syscall"
	"testing"
)

func TestWarnings(t *testing.T) {
	plenty := limits{openFiles: 1 << 20}
	tests := []struct {
		name string
		text string
		host limits
		at   at
		want string // "" = no warning at all
	}{
		{"none", doc(nil), plenty, at{}, ""},
		{"unknown open-file limit", doc(map[string]string{"clients": "clients: 100000"}), limits{}, at{}, ""},

		{"hold outlasts the lease", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: {uniform: {min: 1s, max: 4s}}"}), plenty,
			at{5, "{"}, "hold: about 67% of the holds (uniform 1s–4s) outlast the lease (2s). Allowed: the lock must then be kept by heartbeats, keep-alives or a watchdog"},
		{"every hold outlasts the lease", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: 3s"}), plenty,
			at{5, "3s"}, "hold: every one of the holds (3s) outlast the lease (2s)"},
		{"exponential tail past the lease", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: {exponential: {mean: 1s}}"}), plenty,
			at{5, "{"}, "hold: about 14% of the holds (exponential, mean 1s) outlast the lease (2s)"},
		{"percentile tail past the lease", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: {p50: 100ms, p99: 1s}"}), plenty,
			at{5, "{"}, "hold: about 1 in 809 of the holds (p50 100ms, p99 1s) outlast the lease (2s)"},
		{"negligible exponential tail", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: {exponential: {mean: 50ms}}"}), plenty, at{}, ""},
		{"clamped below the lease", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: {p50: 100ms, p99: 1s, max: 2s}"}), plenty, at{}, ""},

		{"clients beyond the open-file limit", doc(map[string]string{"clients": "clients: 1000"}), limits{openFiles: 1000},
			at{2, "1000"}, `clients: up to 1,000 claims at once in the bench need 1,256 open files, more than the 1,000 it may open (RLIMIT_NOFILE). Each claim is an open connection (one file) for the contenders that dial per claim, plus 256 files of the process's own; a client holds or waits for one key at a time, so the claims are the clients, whatever the number of keys. Claims beyond the limit fail with "too many open files"`},
		{"clients spread over processes fit", doc(map[string]string{"clients": "clients: {count: 1000, processes: 4}"}), limits{openFiles: 1000}, at{}, ""},
		{"clients spread over processes still beyond", doc(map[string]string{"clients": "clients: {count: 4000, processes: 4}"}), limits{openFiles: 1000},
			at{2, "4000"}, "clients: up to 1,000 claims at once in the bench"},

		{"more holding than clients", doc(map[string]string{"clients": "clients: 40", "keys": "keys: 100000", "arrivals": "arrivals: {loop: open, rate: 1000/s}", "hold": "hold: 100ms"}), plenty,
			at{4, "1000/s"}, "arrivals.rate: 1,000/s with a mean hold of 100ms needs 100 clients holding at once, more than the 40 clients. No lock can serve it (Little's law: rate × mean hold): the most 40 clients can complete is 400/s"},
		{"most clients holding", doc(map[string]string{"clients": "clients: 40", "keys": "keys: 100000", "arrivals": "arrivals: {loop: open, rate: 350/s}", "hold": "hold: 100ms"}), plenty,
			at{4, "350/s"}, "arrivals.rate: 350/s with a mean hold of 100ms keeps 35 of the 40 clients holding on average. Requests will queue"},
		{"one key held beyond all time", doc(map[string]string{"keys": "keys: 1", "arrivals": "arrivals: {loop: open, rate: 20/s}", "hold": "hold: 100ms", "clients": "clients: 10"}), plenty,
			at{3, "1"}, "keys: the one key is asked for 20/s and held 100ms on average: 2s of holding per second, more than one holder at a time can give"},
		{"zipfian 0.99 hot key", doc(map[string]string{"clients": "clients: 40", "keys": "keys: {count: 5000, distribution: zipfian}", "arrivals": "arrivals: {loop: open, rate: 300/s}", "hold": "hold: {p1: 20ms, p50: 50ms, p99: 200ms}", "lease": "lease: 10s"}), plenty,
			at{3, "{"}, "keys: the most used key is asked for 31.7/s and held 62ms on average: 1.96s of holding per second"},
		{"hot key mostly held", doc(map[string]string{"keys": "keys: {count: 100, distribution: hot-set, hot_keys: 1%, hot_traffic: 85%}", "arrivals": "arrivals: {loop: open, rate: 10/s}", "hold": "hold: 100ms"}), plenty,
			at{3, "{"}, "keys: the most used key is held 85% of the time (8.5/s × 100ms mean hold)"},
		{"closed loop has no rate checks", doc(map[string]string{"keys": "keys: 1", "arrivals": "arrivals: {loop: closed}", "hold": "hold: 100ms"}), plenty, at{}, ""},

		{"p99 threshold on too few requests", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 10/s}", "duration": "duration: 5s"}, "thresholds:", "  - acquire_p50 < 1ms", "  - acquire_p99 < 1ms"), plenty,
			at{10, "acquire_p99"}, "thresholds[1]: acquire_p99 rests on about 50 requests in the measured window (rate × duration), fewer than the 100 it needs to be more than the slowest one"},
		{"p999 threshold on too few requests", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 100/s}", "duration": "duration: 5s"}, "thresholds:", "  - acquire_p999 < 1ms"), plenty,
			at{9, "acquire_p999"}, "thresholds[0]: acquire_p999 rests on about 500 requests"},
		{"p99 threshold on enough requests", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 100/s}", "duration": "duration: 5s"}, "thresholds:", "  - acquire_p99 < 1ms"), plenty, at{}, ""},
		{"closed loop samples", doc(map[string]string{"clients": "clients: 2", "arrivals": "arrivals: {loop: closed, think: 900ms}", "hold": "hold: 100ms", "duration": "duration: 10s"}, "thresholds:", "  - acquire_p99 < 1ms"), plenty,
			at{9, "acquire_p99"}, "acquire_p99 rests on about 20 requests in the measured window (at most, clients × duration / (mean hold + mean think))"},
		{"p99 threshold on too few requests in the quick window", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 100/s}", "duration": "duration: 5s"}, "quick: {duration: 500ms}", "thresholds:", "  - acquire_p99 < 1ms"), plenty,
			at{10, "acquire_p99"}, "thresholds[0]: acquire_p99 rests on about 50 requests in the quick suite's window (rate × duration), fewer than the 100 it needs to be more than the slowest one; lengthen quick.duration"},
		{"wait p99 on the few requests that wait", doc(map[string]string{"clients": "clients: 40", "keys": "keys: 5000", "arrivals": "arrivals: {loop: open, rate: 300/s}", "hold": "hold: 50ms", "lease": "lease: 10s", "duration": "duration: 4s"}, "thresholds:", "  - wait_p99 < 1s"), plenty,
			at{9, "wait_p99"}, "thresholds[0]: wait_p99 rests on about 3 requests in the measured window (rate × duration × the share that finds its key held)"},
		{"wait p99 on a contended key", doc(map[string]string{"keys": "keys: 1", "arrivals": "arrivals: {loop: closed}", "hold": "hold: 10ms", "duration": "duration: 5s"}, "thresholds:", "  - wait_p99 < 1s"), plenty, at{}, ""},
		{"closed loop without pauses", doc(map[string]string{"arrivals": "arrivals: {loop: closed}", "hold": "hold: 0s"}, "thresholds:", "  - acquire_p999 < 1ms"), plenty, at{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ws, err := parse("w.yaml", []byte(tt.text), tt.host)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(ws) > 0 {
					t.Errorf("warnings %v, want none", ws)
				}
				return
			}
			col := tt.at.col(tt.text)
			for _, w := range ws {
				if w.Line == tt.at.line && w.Col == col && strings.Contains(w.Msg, tt.want) {
					if !strings.HasPrefix(w.String(), "w.yaml:") || !strings.Contains(w.String(), ": warning: ") {
						t.Errorf("String() = %q, want w.yaml:line:col: warning: ...", w.String())
					}
					return
				}
			}
			t.Errorf("no warning at %d:%d containing %q; got %v", tt.at.line, col, tt.want, ws)
		})
	}
}

func TestCheckRate(t *testing.T) {
	open := doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 300/s}"})
	w, _, err := parse("w.yaml", []byte(open), limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		max  float64
		want string
	}{
		{250, "w.yaml:4:30: warning: arrivals.rate: 300/s is above 250/s, the most this contender completed on this workload in a closed loop (its 4 clients never idle). It cannot keep up"},
		{350, "w.yaml:4:30: warning: arrivals.rate: 300/s is 85.7% of 350/s, the most this contender completed on this workload in a closed loop. Expect requests to queue"},
		{1000, ""},
		{0, ""}, // not measured
	}
	for _, tt := range tests {
		wn, ok := w.CheckRate(tt.max)
		if ok != (tt.want != "") || (ok && !strings.HasPrefix(wn.String(), tt.want)) {
			t.Errorf("CheckRate(%v) = %q, %v; want %q", tt.max, wn.String(), ok, tt.want)
		}
	}
	closed, _, err := parse("c.yaml", []byte(doc(map[string]string{"arrivals": "arrivals: {loop: closed}"})), limits{})
	if err != nil {
		t.Fatal(err)
	}
	if wn, ok := closed.CheckRate(1); ok {
		t.Errorf("closed loop: %v", wn)
	}
}

// TestCheckOpenFilesReadsTheLimit: Parse compares against this process's
// real RLIMIT_NOFILE.
func TestCheckOpenFilesReadsTheLimit(t *testing.T) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Skip(err)
	}
	if r.Max > MaxClients {
		t.Skipf("hard limit %d: no client count reaches it", r.Max)
	}
	above := doc(map[string]string{"clients": "clients: " + itoa(int(r.Max))})
	below := doc(map[string]string{"clients": "clients: " + itoa(int(r.Max)-OpenFilesReserve)})
	for _, c := range []struct {
		text string
		warn bool
	}{{above, true}, {below, false}} {
		_, ws, err := Parse("w.yaml", []byte(c.text))
		if err != nil {
			t.Fatal(err)
		}
		got := len(ws) == 1 && strings.Contains(ws[0].Msg, "RLIMIT_NOFILE")
		if got != c.warn || (!c.warn && len(ws) > 0) {
			t.Errorf("limit %d, text %q: warnings %v, want an open-file warning: %v", r.Max, c.text, ws, c.warn)
		}
	}
}

func itoa(n int) string { return strings.ReplaceAll(thousands(n), ",", "") }
