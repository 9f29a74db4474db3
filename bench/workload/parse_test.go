package workload

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// baseFields is a valid workload, one field a line, in this order: a case
// replaces fields by name (keeping line numbers when it stays on one line)
// and appends extra lines after them.
var baseFields = []struct{ name, line string }{
	{"name", "name: t"},                                 // line 1
	{"clients", "clients: 4"},                           // line 2
	{"keys", "keys: 10"},                                // line 3
	{"arrivals", "arrivals: {loop: open, rate: 100/s}"}, // line 4
	{"hold", "hold: 1ms"},                               // line 5
	{"lease", "lease: 2s"},                              // line 6
	{"duration", "duration: 1s"},                        // line 7
}

// doc builds a file from baseFields with the fields of over replaced (""
// drops a field but keeps its line as a comment) and extra appended.
func doc(over map[string]string, extra ...string) string {
	var lines []string
	for _, f := range baseFields {
		l, ok := over[f.name]
		switch {
		case !ok:
			l = f.line
		case l == "":
			l = "# no " + f.name
		}
		lines = append(lines, l)
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// at is an expected position: line, and the column of the first byte of
// marker in that line (0 when marker is "": no column).
type at struct {
	line   int
	marker string
}

func (a at) col(text string) int {
	if a.marker == "" || a.line == 0 {
		return 0
	}
	lines := strings.Split(text, "\n")
	if a.line > len(lines) {
		return -1
	}
	i := strings.Index(lines[a.line-1], a.marker)
	if i < 0 {
		return -1
	}
	return i + 1
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		at   at
		want string // a part of the problem's message
	}{
		// Syntax and shape.
		{"yaml syntax", doc(map[string]string{"keys": "keys: {count: 10"}), at{3, ""}, "not valid YAML (or JSON): did not find expected ',' or '}'"},
		{"tab indentation", "name: t\n\tkeys: 3\n", at{2, ""}, "tab character"},
		{"empty file", "", at{0, ""}, "the file is empty: a workload needs name, clients, keys, arrivals, hold, lease, duration"},
		{"comments only", "# nothing here\n", at{0, ""}, "the file is empty"},
		{"document marker only", "---\n", at{0, ""}, "the file is empty"},
		{"not a mapping", "- name: t\n", at{1, "-"}, "a workload is a mapping of fields"},
		{"two documents", doc(nil, "---", "name: u"), at{8, "---"}, "a second YAML document"},
		{"merge key", doc(nil, "<<: {seed: 2}"), at{8, "<<"}, "merge keys (<<) are not supported"},
		{"no value", doc(map[string]string{"hold": "hold:"}), at{5, "hold"}, "hold has no value"},

		// Fields.
		{"unknown field, near miss", doc(map[string]string{"duration": "duraton: 1s"}), at{7, "duraton"}, `unknown field "duraton"; did you mean "duration"? (fields: name, description, clients`},
		{"unknown field, another tool's name", doc(map[string]string{"clients": "workers: 4"}), at{2, "workers"}, `unknown field "workers"; did you mean clients?`},
		{"unknown field, no near miss", doc(nil, "colour: red"), at{8, "colour"}, `unknown field "colour" (fields: name,`},
		{"unknown nested field", doc(map[string]string{"keys": "keys: {count: 10, distrbution: zipfian}"}), at{3, "distrbution"}, `keys: unknown field "distrbution"; did you mean "distribution"? (fields of keys: count, distribution, theta, hot_keys, hot_traffic)`},
		{"field twice", doc(nil, "lease: 3s"), at{8, "lease"}, "lease is given twice (first at line 6)"},
		{"missing required field", doc(map[string]string{"lease": ""}), at{1, "name"}, "missing lease: the lease (the TTL) of every contender's locks, e.g. lease: 10s"},
		{"missing nested field", doc(map[string]string{"keys": "keys: {distribution: zipfian}"}), at{3, "{"}, "keys: missing count: the number of lock keys"},

		// name, clients, keys.
		{"bad name", doc(map[string]string{"name": "name: Job Queue"}), at{1, "Job"}, `name: "Job Queue" cannot name a variant in results`},
		{"clients zero", doc(map[string]string{"clients": "clients: 0"}), at{2, "0"}, "clients: 0 is out of range: allowed 1 to 100,000"},
		{"clients not a number", doc(map[string]string{"clients": "clients: forty"}), at{2, "forty"}, `clients: "forty" is not a whole number`},
		{"clients a list", doc(map[string]string{"clients": "clients: [4]"}), at{2, "["}, "clients: want a count (clients: 40) or {count: 40, processes: 4}, got a list"},
		{"more processes than clients", doc(map[string]string{"clients": "clients: {count: 4, processes: 8}"}), at{2, "8"}, "clients.processes: 8 processes for 4 clients"},
		{"keys zero", doc(map[string]string{"keys": "keys: {count: 0}"}), at{3, "0"}, "keys.count: 0 is out of range: allowed 1 to 1,000,000"},
		{"unknown key distribution", doc(map[string]string{"keys": "keys: {count: 10, distribution: zipf}"}), at{3, "zipf}"}, `keys.distribution: unknown distribution "zipf"; did you mean "zipfian"? (allowed: uniform, zipfian, hot-set)`},
		{"theta out of range", doc(map[string]string{"keys": "keys: {count: 10, distribution: zipfian, theta: 7}"}), at{3, "7"}, "keys.theta: 7 is out of range: the zipfian constant must be above 0 and at most 3 (YCSB's default is 0.99"},
		{"theta zero", doc(map[string]string{"keys": "keys: {count: 10, distribution: zipfian, theta: 0}"}), at{3, "0}"}, "keys.theta: 0 is out of range"},
		{"theta without zipfian", doc(map[string]string{"keys": "keys: {count: 10, theta: 0.9}"}), at{3, "0.9"}, "keys.theta: applies to distribution: zipfian only"},
		{"hot set without hot_traffic", doc(map[string]string{"keys": "keys: {count: 10, distribution: hot-set, hot_keys: 10%}"}), at{3, "hot-set"}, "keys: a hot set needs hot_keys (its share of the keys, e.g. 1%) and hot_traffic"},
		{"hot_keys not a share", doc(map[string]string{"keys": "keys: {count: 10, distribution: hot-set, hot_keys: 1, hot_traffic: 90%}"}), at{3, "1,"}, "keys.hot_keys: 1 is not a share of the keys strictly between 0 and 1"},
		{"hot_traffic above 100%", doc(map[string]string{"keys": "keys: {count: 10, distribution: hot-set, hot_keys: 10%, hot_traffic: 150%}"}), at{3, "150%"}, "keys.hot_traffic: 150% is not a share of the requests strictly between 0 and 1"},
		{"hot share unreadable", doc(map[string]string{"keys": "keys: {count: 10, distribution: hot-set, hot_keys: lots, hot_traffic: 90%}"}), at{3, "lots"}, `keys.hot_keys: "lots" is not a share of the keys: write it as 1% or 0.01`},
		{"hot set of every key", doc(map[string]string{"keys": "keys: {count: 3, distribution: hot-set, hot_keys: 90%, hot_traffic: 95%}"}), at{3, "90%"}, "keys.hot_keys: 90% of 3 keys rounds to every key"},
		{"hot set of one key", doc(map[string]string{"keys": "keys: {count: 1, distribution: hot-set, hot_keys: 10%, hot_traffic: 90%}"}), at{3, "hot-set"}, "keys: a hot set needs at least 2 keys"},
		{"hot_keys without hot set", doc(map[string]string{"keys": "keys: {count: 10, hot_keys: 10%}"}), at{3, "10%"}, "keys.hot_keys: applies to distribution: hot-set only"},

		// arrivals.
		{"arrivals without loop", doc(map[string]string{"arrivals": "arrivals: {rate: 100/s}"}), at{4, "{"}, "arrivals: missing loop: open (requests arrive at a rate) or closed"},
		{"unknown loop", doc(map[string]string{"arrivals": "arrivals: {loop: opne, rate: 100/s}"}), at{4, "opne"}, `arrivals.loop: unknown loop "opne"; did you mean "open"? (allowed: open, closed)`},
		{"open loop without rate", doc(map[string]string{"arrivals": "arrivals: {loop: open}"}), at{4, "{"}, "arrivals: an open loop needs a rate, e.g. rate: 300/s"},
		{"bad rate", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 300/sec}"}), at{4, "300"}, `arrivals.rate: "300/sec" is not a rate: give a positive number per second (300), or 300/s, 20/min, 5/h`},
		{"zero rate", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 0}"}), at{4, "0}"}, `arrivals.rate: "0" is not a rate`},
		{"rate too high", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 2000000}"}), at{4, "2000000"}, "arrivals.rate: 2,000,000/s is above the most this bench offers, 1,000,000/s"},
		{"unknown spacing", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 5, spacing: poison}"}), at{4, "poison"}, `arrivals.spacing: unknown spacing "poison"; did you mean "poisson"?`},
		{"think in an open loop", doc(map[string]string{"arrivals": "arrivals: {loop: open, rate: 5, think: 1ms}"}), at{4, "1ms"}, "arrivals.think: only a closed loop thinks"},
		{"rate in a closed loop", doc(map[string]string{"arrivals": "arrivals: {loop: closed, rate: 5}"}), at{4, "5}"}, "arrivals.rate: a closed loop has no rate"},
		{"spacing in a closed loop", doc(map[string]string{"arrivals": "arrivals: {loop: closed, spacing: constant}"}), at{4, "constant"}, "arrivals.spacing: spaces the arrivals of an open loop only"},
		{"bad think", doc(map[string]string{"arrivals": "arrivals: {loop: closed, think: {exponential: {mean: 0s}}}"}), at{4, "0s"}, "arrivals.think.exponential.mean: must be above 0s"},

		// hold and its distributions.
		{"duration without unit", doc(map[string]string{"hold": "hold: 20"}), at{5, "20"}, "hold: 20 has no unit: write a Go duration such as 20ms or 20s"},
		{"duration with a space", doc(map[string]string{"hold": "hold: 20 ms"}), at{5, "20"}, `hold: "20 ms" is not a Go duration: write one such as 20ms, 1.5s or 2m`},
		{"negative duration", doc(map[string]string{"hold": "hold: -5ms"}), at{5, "-5ms"}, "hold: -5ms is negative"},
		{"p99 below p50", doc(map[string]string{"hold": "hold: {p50: 200ms, p99: 150ms}"}), at{5, "p99"}, "hold: p99 (150ms) is below p50 (200ms): a higher percentile cannot be shorter"},
		{"three percentiles out of order", doc(map[string]string{"hold": "hold: {p1: 30ms, p50: 20ms, p99: 200ms}"}), at{5, "p50"}, "hold: p50 (20ms) is below p1 (30ms)"},
		{"percentile of zero", doc(map[string]string{"hold": "hold: {p50: 0s, p99: 1ms}"}), at{5, "0s"}, "hold.p50: percentiles must be above 0s"},
		{"p100", doc(map[string]string{"hold": "hold: {p50: 1ms, p100: 2ms}"}), at{5, "p100"}, "hold: p100: percentiles lie strictly between 0 and 100 (p1, p50, p99, p99.9 or p999); bound the extremes with min and max"},
		{"p0", doc(map[string]string{"hold": "hold: {p0: 1ms, p50: 2ms}"}), at{5, "p0"}, "hold: p0: percentiles lie strictly between 0 and 100"},
		{"ambiguous percentile", doc(map[string]string{"hold": "hold: {p05: 1ms, p50: 2ms}"}), at{5, "p05"}, "hold: p05 is ambiguous: write p5 or p0.5"},
		{"same percentile twice", doc(map[string]string{"hold": "hold: {p999: 1s, p99.9: 2s, p50: 1ms}"}), at{5, "p99.9"}, "hold: p99.9 is the same percentile as p999 (line 5)"},
		{"one percentile", doc(map[string]string{"hold": "hold: {p50: 20ms}"}), at{5, "p50"}, "hold: one percentile is no distribution: give two or more (p50: 20ms, p99: 200ms), or a fixed duration"},
		{"min above the lowest percentile", doc(map[string]string{"hold": "hold: {p1: 20ms, p99: 200ms, min: 30ms}"}), at{5, "min"}, "hold: min 30ms is above p1 (20ms): a clamp must not move a given percentile"},
		{"max below the highest percentile", doc(map[string]string{"hold": "hold: {p50: 20ms, p99: 200ms, max: 100ms}"}), at{5, "max"}, "hold: max 100ms is below p99 (200ms)"},
		{"uniform max below min", doc(map[string]string{"hold": "hold: {uniform: {min: 200ms, max: 20ms}}"}), at{5, "20ms"}, "hold.uniform: max 20ms is below min 200ms"},
		{"uniform min equals max", doc(map[string]string{"hold": "hold: {uniform: {min: 20ms, max: 20ms}}"}), at{5, "20ms}"}, "hold.uniform: min and max are both 20ms: write a fixed duration"},
		{"uniform without max", doc(map[string]string{"hold": "hold: {uniform: {min: 20ms}}"}), at{5, "{min"}, "hold.uniform: missing max: the longest duration, e.g. max: 200ms"},
		{"uniform as a list", doc(map[string]string{"hold": "hold: {uniform: [20ms, 200ms]}"}), at{5, "["}, "hold.uniform: want {min: 20ms, max: 200ms}, got a list"},
		{"exponential mean zero", doc(map[string]string{"hold": "hold: {exponential: {mean: 0s}}"}), at{5, "0s"}, "hold.exponential.mean: must be above 0s"},
		{"exponential without mean", doc(map[string]string{"hold": "hold: {exponential: {max: 1s}}"}), at{5, "{max"}, "hold.exponential: missing mean"},
		{"unknown distribution field", doc(map[string]string{"hold": "hold: {uniformm: {min: 1ms, max: 2ms}}"}), at{5, "uniformm"}, `hold: unknown field "uniformm"; did you mean "uniform"? (allowed: a duration (20ms), {fixed: 20ms}`},
		{"mean without a kind", doc(map[string]string{"hold": "hold: {mean: 50ms}"}), at{5, "mean"}, `hold: unknown field "mean"; did you mean exponential: {mean: ...}?`},
		{"two distributions", doc(map[string]string{"hold": "hold: {fixed: 1ms, uniform: {min: 1ms, max: 2ms}}"}), at{5, "uniform"}, "hold: fixed and uniform are two distributions: give one"},
		{"min and max alone", doc(map[string]string{"hold": "hold: {min: 20ms, max: 200ms}"}), at{5, "{"}, "hold: min and max alone are no distribution: for uniform holds write uniform: {min: 20ms, max: 200ms}"},
		{"min beside exponential", doc(map[string]string{"hold": "hold: {exponential: 50ms, min: 1ms}"}), at{5, "min"}, "hold: min bounds percentiles only"},
		{"empty distribution", doc(map[string]string{"hold": "hold: {}"}), at{5, "{"}, "hold: no distribution given"},

		// lease, duration, warmup, seed.
		{"lease zero", doc(map[string]string{"lease": "lease: 0s"}), at{6, "0s"}, "lease: 0s is below 1ms"},
		{"lease in microseconds", doc(map[string]string{"lease": "lease: 1500us"}), at{6, "1500us"}, "lease: 1.5ms is not a whole number of milliseconds"},
		{"duration zero", doc(map[string]string{"duration": "duration: 0s"}), at{7, "0s"}, "duration: must be longer than 0s"},
		{"negative warmup", doc(nil, "warmup: -1s"), at{8, "-1s"}, "warmup: -1s is negative"},
		{"negative seed", doc(nil, "seed: -1"), at{8, "-1"}, `seed: "-1" is not a whole number ≥ 0`},

		// quick.
		{"unknown quick field", doc(nil, "quick: {duraton: 1s}"), at{8, "duraton"}, `quick: unknown field "duraton"; did you mean "duration"? (fields of quick: duration, warmup)`},
		{"quick longer than full", doc(nil, "quick: {duration: 5s}"), at{8, "5s"}, "quick.duration: 5s is longer than duration (1s): the quick suite shortens a run"},
		{"quick warmup longer than full", doc(nil, "warmup: 100ms", "quick: {warmup: 1s}"), at{9, "1s"}, "quick.warmup: 1s is longer than warmup (100ms)"},

		// thresholds.
		{"thresholds not a list", doc(nil, "thresholds: acquire_p99 < 20ms"), at{8, "acquire"}, "thresholds: want a list of conditions"},
		{"threshold a mapping", doc(nil, "thresholds:", "  - {acquire_p99: 20ms}"), at{9, "{"}, `thresholds[0]: want a condition such as "acquire_p99 < 20ms", got a mapping`},
		{"threshold without operator", doc(nil, "thresholds:", "  - acquire_p99 20ms"), at{9, "acquire"}, `thresholds[0]: threshold "acquire_p99 20ms": want METRIC OP VALUE`},
		{"threshold on an unknown metric", doc(nil, "thresholds:", "  - failures < 1", "  - acquire_p95 < 20ms"), at{10, "acquire_p95"}, `thresholds[1]: unknown metric "acquire_p95"; did you mean "acquire_p99"? (metrics: offered_per_sec, achieved_per_sec, acquire_p50`},
		{"threshold metric column inside a quoted string", doc(nil, "thresholds:", `  - "failures < 1"`, `  - "latency_p99 < 20ms"`), at{10, "latency"}, `unknown metric "latency_p99"`},
		{"threshold value column", doc(nil, "thresholds:", "  - failures < lots"), at{9, "lots"}, `thresholds[0]: failures: "lots" is neither a count (0, 5) nor a share of the requests (0.1%)`},
		{"threshold on slo_pass", doc(nil, "thresholds:", "  - slo_pass == 1"), at{9, "slo_pass"}, "slo_pass is the verdict of the thresholds themselves"},
		{"threshold with =", doc(nil, "thresholds:", "  - failures = 0"), at{9, "="}, "operator = is not supported: use <, <=, >, >= (or == for failures)"},
		{"threshold == on a latency", doc(nil, "thresholds:", "  - acquire_p99 == 20ms"), at{9, "=="}, "acquire_p99 == ...: == compares counts only"},
		{"latency threshold without unit", doc(nil, "thresholds:", "  - acquire_p99 < 20"), at{9, "20"}, `acquire_p99: "20" is not a duration: give a Go duration such as 20ms or 1.5s`},
		{"rate threshold with a duration", doc(nil, "thresholds:", "  - achieved_per_sec > 20ms"), at{9, "20ms"}, `achieved_per_sec: "20ms" is not a rate`},
		{"threshold without value", doc(nil, "thresholds:", "  - failures <"), at{9, "<"}, `threshold "failures <" has no value after <`},
		{"failures above 100%", doc(nil, "thresholds:", "  - failures < 150%"), at{9, "150%"}, `failures: "150%" is not a percentage between 0% and 100%`},
		{"achieved share in a closed loop", doc(map[string]string{"arrivals": "arrivals: {loop: closed}"}, "thresholds:", "  - achieved_per_sec >= 99%"), at{9, "99%"}, "a percentage is a share of the offered rate, which only achieved_per_sec of an open loop has"},
		{"offered in a closed loop", doc(map[string]string{"arrivals": "arrivals: {loop: closed}"}, "thresholds:", "  - offered_per_sec > 10"), at{9, "offered"}, "offered_per_sec: a closed loop offers what it achieves; state achieved_per_sec"},
		{"server cpu neither number nor duration", doc(nil, "thresholds:", "  - server_cpu_ms_per_1k < fast"), at{9, "fast"}, "server_cpu_ms_per_1k: \"fast\" is neither a number of milliseconds nor a duration"},

		// JSON.
		{"json unknown field", "{\n  \"name\": \"t\",\n  \"clients\": 4,\n  \"keys\": 10,\n  \"arrivals\": {\"loop\": \"open\", \"rate\": 100},\n  \"hold\": \"1ms\",\n  \"leese\": \"2s\",\n  \"duration\": \"1s\"\n}\n",
			at{7, `"leese"`}, `unknown field "leese"; did you mean "lease"?`},
		{"json syntax", "{\n  \"name\": \"t\",\n  \"clients\": 4,,\n}\n", at{3, ""}, "not valid YAML (or JSON): did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parse("w.yaml", []byte(tt.text), limits{})
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v, want an *Error", err)
			}
			col := tt.at.col(tt.text)
			if col < 0 {
				t.Fatalf("test bug: marker %q not on line %d", tt.at.marker, tt.at.line)
			}
			for _, p := range perr.Problems {
				if p.Line == tt.at.line && p.Col == col && strings.Contains(p.Msg, tt.want) {
					if p.File != "w.yaml" {
						t.Errorf("file %q, want w.yaml", p.File)
					}
					return
				}
			}
			t.Errorf("no problem at %d:%d containing %q; got:\n%v", tt.at.line, col, tt.want, err)
		})
	}
}

// TestParseErrorsAll: every problem of a file is reported at once, in file
// order, in the file:line:col form editors read.
func TestParseErrorsAll(t *testing.T) {
	text := doc(map[string]string{"clients": "clients: 0", "hold": "hold: {p50: 20ms, p99: 2ms}", "duration": "duraton: 1s"})
	_, _, err := parse("jobs.yaml", []byte(text), limits{})
	want := `workload: jobs.yaml is invalid (4 problems):
jobs.yaml:1:1: missing duration: the measured window, a Go duration such as duration: 20s
jobs.yaml:2:10: clients: 0 is out of range: allowed 1 to 100,000
jobs.yaml:5:19: hold: p99 (2ms) is below p50 (20ms): a higher percentile cannot be shorter
jobs.yaml:7:1: unknown field "duraton"; did you mean "duration"? (fields: name, description, clients, keys, arrivals, hold, lease, duration, warmup, seed, thresholds, quick)`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

func TestParseValid(t *testing.T) {
	text := `# a comment
name: checkout
description: |
  Two lines
  of words.
clients: {count: 8, processes: 2}
keys:
  count: 1000
  distribution: hot-set
  hot_keys: 1%
  hot_traffic: 90%
arrivals:
  loop: open
  rate: 20/min
  spacing: constant
hold: &h {p50: 20ms, p999: 2s, max: 5s}
lease: 10s
duration: 8s
seed: 7
quick: {duration: 2s}
thresholds:
  - acquire_p99 < 20ms
  - "failures < 0.1%"
  - achieved_per_sec >= 99%
  - server_cpu_ms_per_1k <= 50
  - wait_p99<1s
`
	w, _, err := parse("c.yaml", []byte(text), limits{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("name", w.Name, "checkout")
	check("description", w.Description, "Two lines\nof words.")
	check("clients", w.Clients, 8)
	check("processes", w.Processes, 2)
	check("keys", w.Keys.Count, 1000)
	check("dist", w.Keys.Dist, HotSet)
	check("hot keys", w.Keys.HotCount(), 10)
	check("hot traffic", w.Keys.HotTraffic, 0.9)
	check("loop", w.Arrivals.Loop, Open)
	check("rate", fmt.Sprintf("%.4f", w.Arrivals.Rate), "0.3333")
	check("spacing", w.Arrivals.Spacing, Constant)
	check("hold", w.Hold.String(), "p50 20ms, p99.9 2s, at most 5s")
	check("lease", w.Lease, 10*time.Second)
	check("window", fmt.Sprint(w.Window(false)), "800ms 8s")      // warm-up defaults to duration/10
	check("quick window", fmt.Sprint(w.Window(true)), "200ms 2s") // warm-up defaults to warmup/4
	check("seed", w.Seed, 7)
	check("source", w.Source, "c.yaml")
	check("text", w.Text, text)
	check("thresholds", len(w.Thresholds), 5)
	wantLimits := []float64{20000, 0.001, 0.99, 50, 1000} // us, ratio, ratio, ms, ms
	for i, l := range wantLimits {
		if i < len(w.Thresholds) && w.Thresholds[i].Limit != l {
			t.Errorf("threshold %q: limit %v, want %v", w.Thresholds[i].Text, w.Thresholds[i].Limit, l)
		}
	}

	// Short forms, defaults, aliases, JSON.
	short := `{"name": "s", "clients": 3, "keys": 5, "arrivals": {"loop": "closed"},
	"hold": {"exponential": "5ms"}, "lease": "2s", "duration": "2s", "warmup": "0s"}`
	w, _, err = parse("s.json", []byte(short), limits{})
	if err != nil {
		t.Fatal(err)
	}
	check("json clients", w.Clients, 3)
	check("json processes", w.Processes, 1)
	check("json keys", w.Keys.String(), "5 keys, uniform")
	check("json think", w.Arrivals.Think.String(), "0s")
	check("json hold", w.Hold.String(), "exponential, mean 5ms")
	check("json seed", w.Seed, DefaultSeed)
	check("json window", fmt.Sprint(w.Window(false)), "0s 2s")

	zipf := doc(map[string]string{"keys": "keys: {count: 100, distribution: zipfian}"})
	w, _, err = parse("z.yaml", []byte(zipf), limits{})
	if err != nil {
		t.Fatal(err)
	}
	check("default theta", w.Keys.Theta, DefaultTheta)
}

func TestParsePercentileKey(t *testing.T) {
	for name, want := range map[string]float64{"p1": 1, "p50": 50, "p99": 99, "p99.9": 99.9, "p999": 99.9, "p9999": 99.99, "p0.5": 0.5, "p5": 5} {
		got, msg := parsePercentileKey(name)
		if msg != "" || got != want {
			t.Errorf("%s: %v %q, want %v", name, got, msg, want)
		}
	}
	for _, name := range []string{"p0", "p100", "p500", "p05", "p1.2.3", "p99.99.9"} {
		if _, msg := parsePercentileKey(name); msg == "" {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSuggest(t *testing.T) {
	allowed := []string{"count", "distribution", "theta", "hot_keys", "hot_traffic"}
	for got, want := range map[string]string{
		"cuont": "count", "distrib": "distribution", "Theta": "theta", "hotkeys": "hot_keys", "hot-traffic": "hot_traffic", "zzz": "", "xyzzyplugh": "",
	} {
		if s := suggest(got, allowed); s != want {
			t.Errorf("suggest(%q) = %q, want %q", got, s, want)
		}
	}
}
