package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

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
