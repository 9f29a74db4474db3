package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestEveryContenderDistinguishable: no two contenders of the fixture
// share colour, dash pattern and point marker, and members of one family
// (which share a hue) differ in their dashes.
func TestEveryContenderDistinguishable(t *testing.T) {
	f := newFigures(fixture(t))
	seen := map[string]string{}
	dashes := map[string]map[string]string{}
	for _, c := range f.contenders {
		ls, gs := f.lineStyle(c), f.glyphStyle(c)
		key := fmt.Sprintf("%v %v %T", ls.Color, ls.Dashes, gs.Shape)
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s are drawn alike (%s)", c, other, key)
		}
		seen[key] = c
		fam := f.family(c)
		if dashes[fam] == nil {
			dashes[fam] = map[string]string{}
		}
		d := fmt.Sprint(ls.Dashes)
		if other, ok := dashes[fam][d]; ok && !f.isFloor(c) {
			t.Errorf("%s and %s of family %s have the same dashes %s", c, other, fam, d)
		}
		dashes[fam][d] = c
	}
}

// TestHandoverChartDrawsTheLease: the handover chart, whose crash and
// freeze bars are bound by the lease, draws it as a reference line.
func TestHandoverChartDrawsTheLease(t *testing.T) {
	svg, err := newFigures(fixture(t)).handoverChart()
	if err != nil || svg == nil {
		t.Fatalf("handoverChart: %v, %d bytes", err, len(svg))
	}
	if !strings.Contains(string(svg), "lease 2s") {
		t.Error("the handover chart has no lease reference line in its legend")
	}
}

// TestLogTicksCoverTheData: on a log axis of at most three decades a
// labelled tick stands within a factor 2.5 of every value, and no value is
// labelled twice (two labels drawn on one spot).
func TestLogTicksCoverTheData(t *testing.T) {
	lo, hi := 1.2, 60.0
	ticks := readableLogTicks.Ticks(lo, hi)
	seen := map[float64]bool{}
	var labelled []float64
	for _, tk := range ticks {
		if tk.Label == "" {
			continue
		}
		if seen[tk.Value] {
			t.Errorf("%v labelled twice", tk.Value)
		}
		seen[tk.Value] = true
		labelled = append(labelled, tk.Value)
	}
	for v := lo; v <= hi; v *= 1.1 {
		near := false
		for _, l := range labelled {
			if l/v <= 2.5 && v/l <= 2.5 {
				near = true
			}
		}
		if !near {
			t.Errorf("no label within 2.5x of %.2f (labels %v)", v, labelled)
		}
	}
}
