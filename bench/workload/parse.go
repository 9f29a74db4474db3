package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
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

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func (p *parser) clients(v *yaml.Node, d *draft) {
	w := &d.w
	w.pos.clients = pos{v.Line, v.Column}
	count := func(n *yaml.Node, path string) {
		if c, ok := p.integer(n, path, 1, MaxClients); ok {
			w.Clients = c
		}
	}
	if v.Kind == yaml.ScalarNode {
		count(v, "clients")
		return
	}
	if !p.isMapping(v, "clients", "a count (clients: 40) or {count: 40, processes: 4}") {
		return
	}
	var procNode *yaml.Node
	p.fields("clients", v, v, []field{
		{"count", "the number of clients, e.g. count: 40", func(n *yaml.Node) {
			w.pos.clients = pos{n.Line, n.Column}
			count(n, "clients.count")
		}},
		{"processes", "", func(n *yaml.Node) {
			procNode = n
			if c, ok := p.integer(n, "clients.processes", 1, MaxClients); ok {
				w.Processes = c
			}
		}},
	})
	if procNode != nil && w.Clients > 0 && w.Processes > w.Clients {
		p.errAt(procNode, "clients.processes: %d processes for %d clients: at most one process per client", w.Processes, w.Clients)
	}
}

var keyDistributions = []string{"uniform", "zipfian", "hot-set"}

func (p *parser) keys(v *yaml.Node, d *draft) {
	k := &d.w.Keys
	d.w.pos.keys = pos{v.Line, v.Column}
	count := func(n *yaml.Node, path string) {
		if c, ok := p.integer(n, path, 1, MaxKeys); ok {
			k.Count = c
		}
	}
	if v.Kind == yaml.ScalarNode {
		count(v, "keys")
		p.buildChooser(k)
		return
	}
	if !p.isMapping(v, "keys", "a count (keys: 5000) or {count: 5000, distribution: zipfian}") {
		return
	}
	var distNode, thetaNode, hotKeysNode, hotTrafficNode *yaml.Node
	distOK := true
	p.fields("keys", v, v, []field{
		{"count", "the number of lock keys, e.g. count: 5000", func(n *yaml.Node) { count(n, "keys.count") }},
		{"distribution", "", func(n *yaml.Node) {
			distNode = n
			s, ok := p.scalar(n, "keys.distribution", "uniform, zipfian or hot-set")
			if !ok {
				distOK = false
				return
			}
			switch s {
			case "uniform":
				k.Dist = UniformKeys
			case "zipfian":
				k.Dist = Zipfian
			case "hot-set":
				k.Dist = HotSet
			default:
				distOK = false
				p.errAt(n, "keys.distribution: unknown distribution %q%s (allowed: uniform, zipfian, hot-set)", s, didYouMean(s, keyDistributions))
			}
		}},
		{"theta", "", func(n *yaml.Node) {
			thetaNode = n
			if f, ok := p.number(n, "keys.theta"); ok {
				if !(f > 0 && f <= MaxTheta) {
					p.errAt(n, "keys.theta: %g is out of range: the zipfian constant must be above 0 and at most %g (YCSB's default is %g; 0 would be uniform)", f, MaxTheta, DefaultTheta)
				}
				k.Theta = f
			}
		}},
		{"hot_keys", "", func(n *yaml.Node) {
			hotKeysNode = n
			if f, ok := p.fraction(n, "keys.hot_keys", "of the keys"); ok {
				k.HotKeys = f
			}
		}},
		{"hot_traffic", "", func(n *yaml.Node) {
			hotTrafficNode = n
			if f, ok := p.fraction(n, "keys.hot_traffic", "of the requests"); ok {
				k.HotTraffic = f
			}
		}},
	})
	if !distOK {
		return
	}
	if thetaNode != nil && k.Dist != Zipfian {
		p.errAt(thetaNode, "keys.theta: applies to distribution: zipfian only")
	}
	if k.Dist == Zipfian && thetaNode == nil {
		k.Theta = DefaultTheta
	}
	for _, n := range []*yaml.Node{hotKeysNode, hotTrafficNode} {
		if n != nil && k.Dist != HotSet {
			p.errAt(n, "keys.%s: applies to distribution: hot-set only", keyOf(v, n))
		}
	}
	if k.Dist == HotSet {
		at := distNode
		switch {
		case hotKeysNode == nil || hotTrafficNode == nil:
			p.errAt(at, "keys: a hot set needs hot_keys (its share of the keys, e.g. 1%%) and hot_traffic (its share of the requests, e.g. 90%%)")
			return
		case k.Count == 1:
			p.errAt(at, "keys: a hot set needs at least 2 keys (count is 1)")
			return
		case k.Count > 0 && k.HotCount() >= k.Count:
			p.errAt(hotKeysNode, "keys.hot_keys: %s of %s rounds to every key: the hot set must leave cold keys", percent(k.HotKeys), countNoun(k.Count, "key", "keys"))
			return
		}
	}
	p.buildChooser(k)
}

// buildChooser builds k's sampler once k is valid.
func (p *parser) buildChooser(k *Keys) {
	if k.Count > 0 && len(p.probs) == 0 {
		k.chooser = newKeyChooser(*k)
	}
}

func (p *parser) arrivals(v *yaml.Node, d *draft) {
	a := &d.w.Arrivals
	if !p.isMapping(v, "arrivals", "{loop: open, rate: 300/s} or {loop: closed, think: 10ms}") {
		return
	}
	p.fields("arrivals", v, v, []field{
		{"loop", "open (requests arrive at a rate) or closed (clients loop with a think time), e.g. loop: open", func(n *yaml.Node) {
			s, ok := p.scalar(n, "arrivals.loop", "open or closed")
			if !ok {
				return
			}
			switch s {
			case "open":
				a.Loop, d.loopSet = Open, true
			case "closed":
				a.Loop, d.loopSet = Closed, true
			default:
				p.errAt(n, "arrivals.loop: unknown loop %q%s (allowed: open, closed)", s, didYouMean(s, []string{"open", "closed"}))
			}
		}},
		{"rate", "", func(n *yaml.Node) {
			d.rateNode = n
			d.w.pos.rate = pos{n.Line, n.Column}
			s, ok := p.scalar(n, "arrivals.rate", "a rate")
			if !ok {
				return
			}
			r, ok := parseRate(s)
			switch {
			case !ok:
				p.errAt(n, "arrivals.rate: %q is not a rate: give a positive number per second (300), or 300/s, 20/min, 5/h", s)
			case r > MaxRate:
				p.errAt(n, "arrivals.rate: %s is above the most this bench offers, %s", fmtRate(r), fmtRate(MaxRate))
			}
			a.Rate = r
		}},
		{"spacing", "", func(n *yaml.Node) {
			d.spacingNode = n
			s, ok := p.scalar(n, "arrivals.spacing", "poisson or constant")
			if !ok {
				return
			}
			switch s {
			case "poisson":
				a.Spacing = Poisson
			case "constant":
				a.Spacing = Constant
			default:
				p.errAt(n, "arrivals.spacing: unknown spacing %q%s (allowed: poisson, constant)", s, didYouMean(s, []string{"poisson", "constant"}))
			}
		}},
		{"think", "", func(n *yaml.Node) {
			d.thinkNode = n
			if dist, ok := p.distribution(n, "arrivals.think"); ok {
				a.Think = dist
			}
		}},
	})
	if !d.loopSet {
		return
	}
	if a.Loop == Open {
		if d.rateNode == nil {
			p.errAt(v, "arrivals: an open loop needs a rate, e.g. rate: 300/s")
		}
		if d.thinkNode != nil {
			p.errAt(d.thinkNode, "arrivals.think: only a closed loop thinks; an open loop's pace is its rate (for a think time write loop: closed)")
			a.Think = Distribution{}
		}
		return
	}
	if d.rateNode != nil {
		p.errAt(d.rateNode, "arrivals.rate: a closed loop has no rate: its clients go as fast as the lock allows, pausing only to think (for a rate write loop: open)")
	}
	if d.spacingNode != nil {
		p.errAt(d.spacingNode, "arrivals.spacing: spaces the arrivals of an open loop only")
	}
}

// crossCheck checks what depends on several fields, once all are read.
func (p *parser) crossCheck(d *draft) {
	w := &d.w
	if !d.warmupSet {
		w.Warmup = w.Duration / 10
	}
	w.QuickDuration, w.QuickWarmup = w.Duration/quickDivisor, w.Warmup/quickDivisor
	if d.quick != nil {
		p.quickBlock(d)
	}
	if d.thresholds != nil {
		p.thresholdList(d)
	}
}

func (p *parser) quickBlock(d *draft) {
	w := &d.w
	q := d.quick
	if !p.isMapping(q, "quick", "{duration: 2s, warmup: 500ms}") {
		return
	}
	p.fields("quick", q, q, []field{
		{"duration", "", func(n *yaml.Node) {
			dur, ok := p.duration(n, "quick.duration")
			switch {
			case !ok:
			case dur == 0:
				p.errAt(n, "quick.duration: must be longer than 0s")
			case w.Duration > 0 && dur > w.Duration:
				p.errAt(n, "quick.duration: %s is longer than duration (%s): the quick suite shortens a run", fmtDuration(dur), fmtDuration(w.Duration))
			default:
				w.QuickDuration = dur
			}
		}},
		{"warmup", "", func(n *yaml.Node) {
			dur, ok := p.duration(n, "quick.warmup")
			switch {
			case !ok:
			case dur > w.Warmup:
				p.errAt(n, "quick.warmup: %s is longer than warmup (%s): the quick suite shortens a run", fmtDuration(dur), fmtDuration(w.Warmup))
			default:
				w.QuickWarmup = dur
			}
		}},
	})
}

func (p *parser) thresholdList(d *draft) {
	n := d.thresholds
	if n.Kind != yaml.SequenceNode {
		p.errAt(n, "thresholds: want a list of conditions, e.g.\n  thresholds:\n    - acquire_p99 < 20ms\n    - failures < 0.1%%")
		return
	}
	for i, item := range n.Content {
		item = deref(item)
		path := fmt.Sprintf("thresholds[%d]", i)
		s, ok := p.scalar(item, path, `a condition such as "acquire_p99 < 20ms"`)
		if !ok {
			continue
		}
		t, off, msg := parseThreshold(s, d.w.Arrivals.Loop)
		if msg != "" {
			p.probs = append(p.probs, Problem{File: p.file, Line: item.Line, Col: columnOf(item, off), Msg: path + ": " + msg})
			continue
		}
		t.line, t.col = item.Line, item.Column
		d.w.Thresholds = append(d.w.Thresholds, t)
	}
}

// columnOf is the column of byte off inside scalar n, where it can be
// known (a plain or quoted scalar on one line).
func columnOf(n *yaml.Node, off int) int {
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return n.Column
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return n.Column + 1 + off
	}
	return n.Column + off
}

// distribution reads a duration distribution (hold, think).
func (p *parser) distribution(v *yaml.Node, path string) (Distribution, bool) {
	if v.Kind == yaml.ScalarNode {
		d, ok := p.duration(v, path)
		return Distribution{Kind: Fixed, Fixed: d}, ok
	}
	const forms = "a duration (20ms), {fixed: 20ms}, {uniform: {min: 20ms, max: 200ms}}, {exponential: {mean: 50ms}} or percentiles {p50: 20ms, p99: 200ms}"
	if !p.isMapping(v, path, forms) {
		return Distribution{}, false
	}
	var (
		dist     Distribution
		kinds    []string // the forms given, in order
		kindNode = map[string]*yaml.Node{}
		minNode  *yaml.Node
		maxNode  *yaml.Node
		pctNodes = map[float64]*yaml.Node{}
		pctBad   bool // a percentile key that could not be read
		ok       = true
	)
	addKind := func(kind string, k *yaml.Node) {
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
			kindNode[kind] = k
		}
	}
	known := []string{"fixed", "uniform", "exponential", "min", "max", "p50", "p90", "p99", "p99.9"}
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := deref(v.Content[i]), deref(v.Content[i+1])
		if first, dup := seen[k.Value]; dup {
			p.errAt(k, "%s: %s is given twice (first at line %d)", path, k.Value, first)
			ok = false
			continue
		}
		seen[k.Value] = k.Line
		if isNull(val) {
			p.errAt(k, "%s.%s has no value", path, k.Value)
			ok = false
			continue
		}
		switch name := k.Value; {
		case name == "fixed":
			addKind(name, k)
			d, good := p.duration(val, path+".fixed")
			dist.Fixed, ok = d, ok && good
		case name == "uniform":
			addKind(name, k)
			lo, hi, good := p.uniform(val, path+".uniform")
			dist.Min, dist.Max, ok = lo, hi, ok && good
		case name == "exponential":
			addKind(name, k)
			mean, hi, good := p.exponential(val, path+".exponential")
			dist.Mean, dist.Max, ok = mean, hi, ok && good
		case name == "min" || name == "max":
			d, good := p.duration(val, path+"."+name)
			ok = ok && good
			if name == "min" {
				minNode, dist.Min = k, d
			} else {
				maxNode, dist.Max = k, d
			}
		case len(name) > 1 && name[0] == 'p' && name[1] >= '0' && name[1] <= '9':
			addKind("percentiles", k)
			pct, msg := parsePercentileKey(name)
			if msg != "" {
				p.errAt(k, "%s: %s", path, msg)
				ok, pctBad = false, true
				continue
			}
			if prev, dup := pctNodes[pct]; dup {
				p.errAt(k, "%s: %s is the same percentile as %s (line %d)", path, name, prev.Value, prev.Line)
				ok, pctBad = false, true
				continue
			}
			d, good := p.duration(val, path+"."+name)
			if good && d == 0 {
				p.errAt(val, "%s.%s: percentiles must be above 0s (they are interpolated on a log scale); for holds of 0 write %s: 0s", path, name, path)
				good = false
			}
			ok, pctBad = ok && good, pctBad || !good
			pctNodes[pct] = k
			dist.Points = append(dist.Points, Point{Percentile: pct, Value: d})
		default:
			hint := didYouMean(name, known)
			if s, ok := distSynonyms[name]; ok {
				hint = fmt.Sprintf("; did you mean %s?", s)
			}
			p.errAt(k, "%s: unknown field %q%s (allowed: %s)", path, name, hint, forms)
			ok = false
		}
	}
	switch {
	case len(kinds) == 0 && (minNode != nil || maxNode != nil):
		p.errAt(v, "%s: min and max alone are no distribution: for uniform holds write uniform: {min: 20ms, max: 200ms}; beside percentiles they clamp them", path)
		return dist, false
	case len(kinds) == 0:
		p.errAt(v, "%s: no distribution given: want %s", path, forms)
		return dist, false
	case len(kinds) > 1:
		p.errAt(kindNode[kinds[1]], "%s: %s and %s are two distributions: give one", path, kinds[0], kinds[1])
		return dist, false
	}
	if kinds[0] != "percentiles" {
		for _, n := range []*yaml.Node{minNode, maxNode} {
			if n != nil {
				p.errAt(n, "%s: %s bounds percentiles only; uniform takes min and max inside (uniform: {min: 20ms, max: 200ms}), exponential a max inside", path, n.Value)
				ok = false
			}
		}
	}
	switch kinds[0] {
	case "fixed":
		dist.Kind = Fixed
	case "uniform":
		dist.Kind = Uniform
	case "exponential":
		dist.Kind = Exponential
	case "percentiles":
		dist.Kind = Percentiles
		if pctBad {
			return dist, false
		}
		ok = p.percentiles(&dist, path, pctNodes, minNode, maxNode) && ok
	}
	return dist, ok
}

// percentiles checks the points of a percentile distribution.
func (p *parser) percentiles(d *Distribution, path string, nodes map[float64]*yaml.Node, minNode, maxNode *yaml.Node) bool {
	slices.SortFunc(d.Points, func(a, b Point) int {
		if a.Percentile < b.Percentile {
			return -1
		}
		return 1
	})
	if len(d.Points) < 2 {
		p.errAt(nodes[d.Points[0].Percentile], "%s: one percentile is no distribution: give two or more (p50: 20ms, p99: 200ms), or a fixed duration", path)
		return false
	}
	ok := true
	for i := 1; i < len(d.Points); i++ {
		lo, hi := d.Points[i-1], d.Points[i]
		if hi.Value < lo.Value {
			p.errAt(nodes[hi.Percentile], "%s: %s (%s) is below %s (%s): a higher percentile cannot be shorter",
				path, percentileName(hi.Percentile), fmtDuration(hi.Value), percentileName(lo.Percentile), fmtDuration(lo.Value))
			ok = false
		}
	}
	first, last := d.Points[0], d.Points[len(d.Points)-1]
	if minNode != nil && d.Min > first.Value {
		p.errAt(minNode, "%s: min %s is above %s (%s): a clamp must not move a given percentile", path, fmtDuration(d.Min), percentileName(first.Percentile), fmtDuration(first.Value))
		ok = false
	}
	if maxNode != nil && d.Max < last.Value {
		p.errAt(maxNode, "%s: max %s is below %s (%s): a clamp must not move a given percentile", path, fmtDuration(d.Max), percentileName(last.Percentile), fmtDuration(last.Value))
		ok = false
	}
	return ok
}

// parsePercentileKey reads "p50" as 50, "p99.9" and "p999" as 99.9.
func parsePercentileKey(name string) (float64, string) {
	digits := name[1:]
	const allowed = "percentiles lie strictly between 0 and 100 (p1, p50, p99, p99.9 or p999); bound the extremes with min and max"
	var s string
	switch {
	case strings.Contains(digits, "."):
		s = digits
	case len(digits) > 1 && digits[0] == '0':
		return 0, fmt.Sprintf("%s is ambiguous: write p%s or p0.%s", name, strings.TrimLeft(digits, "0"), digits[1:])
	case len(digits) <= 2:
		s = digits
	case strings.HasPrefix(digits, "99"):
		s = "99." + digits[2:] // p999 = 99.9, as the metric names spell it
	default:
		return 0, fmt.Sprintf("%s: %s", name, allowed)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a percentile: %s", name, allowed)
	}
	if !(f > 0 && f < 100) {
		return 0, fmt.Sprintf("%s: %s", name, allowed)
	}
	return f, ""
}

func (p *parser) uniform(v *yaml.Node, path string) (lo, hi time.Duration, ok bool) {
	if !p.isMapping(v, path, "{min: 20ms, max: 200ms}") {
		return 0, 0, false
	}
	var maxNode *yaml.Node
	ok = true
	var set int
	p.fields(path, v, v, []field{
		{"min", "the shortest duration, e.g. min: 20ms", func(n *yaml.Node) {
			d, good := p.duration(n, path+".min")
			lo, ok = d, ok && good
			set++
		}},
		{"max", "the longest duration, e.g. max: 200ms", func(n *yaml.Node) {
			d, good := p.duration(n, path+".max")
			hi, ok, maxNode = d, ok && good, n
			set++
		}},
	})
	if set < 2 {
		return lo, hi, false
	}
	switch {
	case ok && hi < lo:
		p.errAt(maxNode, "%s: max %s is below min %s", path, fmtDuration(hi), fmtDuration(lo))
		ok = false
	case ok && hi == lo:
		p.errAt(maxNode, "%s: min and max are both %s: write a fixed duration", path, fmtDuration(lo))
		ok = false
	}
	return lo, hi, ok
}

func (p *parser) exponential(v *yaml.Node, path string) (mean, hi time.Duration, ok bool) {
	if v.Kind == yaml.ScalarNode { // exponential: 50ms is short for {mean: 50ms}
		mean, ok = p.duration(v, path)
		if ok && mean == 0 {
			p.errAt(v, "%s: the mean must be above 0s", path)
			ok = false
		}
		return mean, 0, ok
	}
	if !p.isMapping(v, path, "{mean: 50ms} or {mean: 50ms, max: 1s}") {
		return 0, 0, false
	}
	ok = true
	var meanNode, maxNode *yaml.Node
	p.fields(path, v, v, []field{
		{"mean", "the mean duration, e.g. mean: 50ms", func(n *yaml.Node) {
			d, good := p.duration(n, path+".mean")
			mean, ok, meanNode = d, ok && good, n
		}},
		{"max", "", func(n *yaml.Node) {
			d, good := p.duration(n, path+".max")
			hi, ok, maxNode = d, ok && good, n
		}},
	})
	if meanNode == nil {
		return 0, 0, false
	}
	if ok && mean == 0 {
		p.errAt(meanNode, "%s.mean: must be above 0s", path)
		ok = false
	}
	if ok && maxNode != nil && hi <= 0 {
		p.errAt(maxNode, "%s.max: must be above 0s", path)
		ok = false
	}
	return mean, hi, ok
}

// scalar returns scalar v's value, or reports what was wanted.
func (p *parser) scalar(v *yaml.Node, path, want string) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		p.errAt(v, "%s: want %s, got %s", path, want, kindWords(v))
		return "", false
	}
	return v.Value, true
}

func (p *parser) isMapping(v *yaml.Node, path, want string) bool {
	if v.Kind != yaml.MappingNode {
		p.errAt(v, "%s: want %s, got %s", path, want, kindWords(v))
		return false
	}
	return true
}

// duration reads a Go duration ≥ 0.
func (p *parser) duration(v *yaml.Node, path string) (time.Duration, bool) {
	s, ok := p.scalar(v, path, "a Go duration such as 20ms")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err == nil && d < 0:
		p.errAt(v, "%s: %s is negative", path, s)
		return 0, false
	case err == nil:
		return d, true
	}
	if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
		p.errAt(v, "%s: %s has no unit: write a Go duration such as %sms or %ss", path, s, s, s)
	} else {
		p.errAt(v, "%s: %q is not a Go duration: write one such as 20ms, 1.5s or 2m (units ns, us, ms, s, m, h)", path, s)
	}
	return 0, false
}

// integer reads a whole number in [lo, hi].
func (p *parser) integer(v *yaml.Node, path string, lo, hi int) (int, bool) {
	s, ok := p.scalar(v, path, "a whole number")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	switch {
	case err != nil:
		p.errAt(v, "%s: %q is not a whole number", path, s)
		return 0, false
	case n < lo || n > hi:
		p.errAt(v, "%s: %d is out of range: allowed %s to %s", path, n, thousands(lo), thousands(hi))
		return 0, false
	}
	return n, true
}

// number reads a finite number.
func (p *parser) number(v *yaml.Node, path string) (float64, bool) {
	s, ok := p.scalar(v, path, "a number")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.errAt(v, "%s: %q is not a number", path, s)
		return 0, false
	}
	return f, true
}

// fraction reads a share strictly between 0 and 1, written 0.01 or 1%.
func (p *parser) fraction(v *yaml.Node, path, of string) (float64, bool) {
	s, ok := p.scalar(v, path, "a share such as 1% or 0.01")
	if !ok {
		return 0, false
	}
	var f float64
	if strings.HasSuffix(s, "%") {
		f, ok = parsePercent(s)
	} else {
		var err error
		f, err = strconv.ParseFloat(s, 64)
		ok = err == nil && !math.IsNaN(f)
	}
	switch {
	case !ok:
		p.errAt(v, "%s: %q is not a share %s: write it as 1%% or 0.01", path, s, of)
		return 0, false
	case !(f > 0 && f < 1):
		p.errAt(v, "%s: %s is not a share %s strictly between 0 and 1 (0%% and 100%%): write it as 1%% or 0.01", path, s, of)
		return 0, false
	}
	return f, true
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func kindWords(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// keyOf returns the key of value node val in mapping m.
func keyOf(m, val *yaml.Node) string {
	for i := 1; i < len(m.Content); i += 2 {
		if deref(m.Content[i]) == val {
			return m.Content[i-1].Value
		}
	}
	return ""
}

func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
