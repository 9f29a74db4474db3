package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Bounds of a workload file's numbers.
const (
	// MaxClients bounds clients.count.
	MaxClients = 100_000
	// MaxRate bounds arrivals.rate (per second).
	MaxRate = 1_000_000
)

// Parse reads a workload file (YAML, or JSON as YAML's subset); file names
// it in problems. It returns the workload and its warnings, or an *Error
// with every problem found. The open-file warning reads this process's
// RLIMIT_NOFILE.
func Parse(file string, data []byte) (Workload, []Warning, error) {
	return parse(file, data, hostLimits())
}

func parse(file string, data []byte, host limits) (Workload, []Warning, error) {
	p := &parser{file: file}
	w, ok := p.document(data)
	if !ok || len(p.probs) > 0 {
		slices.SortStableFunc(p.probs, func(a, b Problem) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Col - b.Col
		})
		return Workload{}, nil, &Error{File: file, Problems: p.probs}
	}
	w.Source, w.Text = file, string(data)
	return w, w.warnings(host), nil
}

// parser collects the problems of one file.
type parser struct {
	file  string
	probs []Problem
}

func (p *parser) errAt(n *yaml.Node, format string, args ...any) {
	p.probs = append(p.probs, Problem{File: p.file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)})
}

// draft is a workload being read, with the nodes that cross-field checks
// come back to.
type draft struct {
	w                   Workload
	warmupSet, loopSet  bool
	thresholds, quick   *yaml.Node
	rateNode, thinkNode *yaml.Node
	spacingNode         *yaml.Node
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data into a workload; false when nothing could be read.
func (p *parser) document(data []byte) (Workload, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.probs = append(p.probs, Problem{File: p.file, Msg: "the file is empty: a workload needs " + strings.Join(requiredTop(), ", ")})
			return Workload{}, false
		}
		p.syntax(err)
		return Workload{}, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.errAt(&extra, "a second YAML document: a workload file holds one workload")
	} else if !errors.Is(err, io.EOF) {
		p.syntax(err)
	}
	if len(doc.Content) == 0 || isNull(deref(doc.Content[0])) { // "---" and nothing else
		p.probs = append(p.probs, Problem{File: p.file, Msg: "the file is empty: a workload needs " + strings.Join(requiredTop(), ", ")})
		return Workload{}, false
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.errAt(root, "a workload is a mapping of fields (name: ..., clients: ...), not %s", kindWords(root))
		return Workload{}, false
	}
	d := &draft{}
	d.w.Processes, d.w.Seed = 1, DefaultSeed
	p.fields("", root, root, p.topFields(d))
	p.crossCheck(d)
	return d.w, true
}

// yamlParserErrors are the problems yaml's parser (not its scanner)
// reports: it gives their line counted from 0, the scanner's from 1.
var yamlParserErrors = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected key", "did not find expected node content",
}

func (p *parser) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if slices.Contains(yamlParserErrors, msg) {
		line++ // also when no line was given: that was line 0
	}
	p.probs = append(p.probs, Problem{File: p.file, Line: line, Msg: "not valid YAML (or JSON): " + msg})
}

// field is one key of a mapping and how to read its value.
type field struct {
	name string
	// required, when set, is what a missing field should hold: the
	// problem says it.
	required string
	decode   func(val *yaml.Node)
}

func requiredTop() []string {
	return []string{"name", "clients", "keys", "arrivals", "hold", "lease", "duration"}
}

// synonyms are names other tools use for a field (k6, YCSB, wrk2), so
// that "did you mean" can answer for them too.
var synonyms = map[string]map[string]string{
	"": {
		"workers": "clients", "vus": "clients", "concurrency": "clients", "connections": "clients",
		"ttl": "lease", "warm_up": "warmup", "warm-up": "warmup", "slo": "thresholds", "slos": "thresholds",
		"rate": "arrivals: {rate: ...}", "think": "arrivals: {think: ...}", "think_time": "arrivals: {think: ...}",
		"hold_time": "hold", "recordcount": "keys: {count: ...}", "requestdistribution": "keys: {distribution: ...}",
	},
	"keys": {"zipfian_constant": "theta", "zipfianconstant": "theta", "s": "theta", "constant": "theta", "records": "count"},
}

// distSynonyms answer "did you mean" for a distribution's fields.
var distSynonyms = map[string]string{
	"mean": "exponential: {mean: ...}", "median": "p50", "avg": "exponential: {mean: ...}", "average": "exponential: {mean: ...}",
}

// fields reads mapping n: each known key through its field, every unknown
// or repeated key as a problem, every missing required field at `at`.
func (p *parser) fields(path string, at, n *yaml.Node, fs []field) {
	seen := map[string]*yaml.Node{}
	var names []string
	for _, f := range fs {
		names = append(names, f.name)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		name := k.Value
		if name == "<<" {
			p.errAt(k, "%smerge keys (<<) are not supported: write the fields out", prefix(path))
			continue
		}
		if first, dup := seen[name]; dup {
			p.errAt(k, "%s%s is given twice (first at line %d)", prefix(path), name, first.Line)
			continue
		}
		seen[name] = k
		i := slices.Index(names, name)
		if i < 0 {
			hint := didYouMean(name, names)
			if s, ok := synonyms[path][strings.ToLower(name)]; ok && hint == "" {
				hint = fmt.Sprintf("; did you mean %s?", s)
			}
			where := "fields"
			if path != "" {
				where = "fields of " + path
			}
			p.errAt(k, "%sunknown field %q%s (%s: %s)", prefix(path), name, hint, where, strings.Join(names, ", "))
			continue
		}
		if isNull(v) {
			p.errAt(k, "%s has no value", join(path, name))
			continue
		}
		fs[i].decode(v)
	}
	for _, f := range fs {
		if f.required != "" && seen[f.name] == nil {
			p.errAt(at, "%smissing %s: %s", prefix(path), f.name, f.required)
		}
	}
}

func (p *parser) topFields(d *draft) []field {
	w := &d.w
	return []field{
		{"name", "a short name for results and the report, e.g. name: job-queue", func(v *yaml.Node) {
			if s, ok := p.scalar(v, "name", "a name"); ok {
				if !validName.MatchString(s) {
					p.errAt(v, "name: %q cannot name a variant in results: use lower-case letters, digits, '-', '_' and '.', starting with a letter or digit, at most 64 characters (e.g. job-queue)", s)
				}
				w.Name = s
			}
		}},
		{"description", "", func(v *yaml.Node) {
			if s, ok := p.scalar(v, "description", "text"); ok {
				w.Description = strings.TrimSpace(s)
			}
		}},
		{"clients", "how many clients take locks, e.g. clients: 40 (or clients: {count: 40, processes: 4})", func(v *yaml.Node) {
			p.clients(v, d)
		}},
		{"keys", "how many lock keys and how requests spread over them, e.g. keys: {count: 5000, distribution: zipfian}", func(v *yaml.Node) {
			p.keys(v, d)
		}},
		{"arrivals", "how requests arrive, e.g. arrivals: {loop: open, rate: 300/s} or arrivals: {loop: closed, think: 10ms}", func(v *yaml.Node) {
			p.arrivals(v, d)
		}},
		{"hold", "how long each grant is held, e.g. hold: 20ms or hold: {p50: 20ms, p99: 200ms}", func(v *yaml.Node) {
			w.pos.hold = pos{v.Line, v.Column}
			if dist, ok := p.distribution(v, "hold"); ok {
				w.Hold = dist
			}
		}},
		{"lease", "the lease (the TTL) of every contender's locks, e.g. lease: 10s", func(v *yaml.Node) {
			w.pos.lease = pos{v.Line, v.Column}
			if l, ok := p.duration(v, "lease"); ok {
				switch {
				case l < time.Millisecond:
					p.errAt(v, "lease: %s is below 1ms: leases and TTLs count whole milliseconds", fmtDuration(l))
				case l%time.Millisecond != 0:
					p.errAt(v, "lease: %s is not a whole number of milliseconds (leases and TTLs count them)", fmtDuration(l))
				}
				w.Lease = l
			}
		}},
		{"duration", "the measured window, a Go duration such as duration: 20s", func(v *yaml.Node) {
			if dur, ok := p.duration(v, "duration"); ok {
				if dur == 0 {
					p.errAt(v, "duration: must be longer than 0s")
				}
				w.Duration = dur
			}
		}},
		{"warmup", "", func(v *yaml.Node) {
			if dur, ok := p.duration(v, "warmup"); ok {
				w.Warmup, d.warmupSet = dur, true
			}
		}},
		{"seed", "", func(v *yaml.Node) {
			if s, ok := p.scalar(v, "seed", "a whole number"); ok {
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					p.errAt(v, "seed: %q is not a whole number ≥ 0", s)
				}
				w.Seed = n
			}
		}},
		{"thresholds", "", func(v *yaml.Node) { d.thresholds = v }},
		{"quick", "", func(v *yaml.Node) { d.quick = v }},
	}
}
