package workload

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

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
