package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

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
