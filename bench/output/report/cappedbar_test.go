package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A freeze trial whose waiter never got the lock (beta in the decision
// fixture) is drawn as a capped bar: a dashed outline at the trial's
// bound, labelled in the chart itself, against
// testdata/handover-capped.golden.svg (go test -update rewrites it;
// review the diff, and look at it in a browser).
func TestCappedBarGolden(t *testing.T) {
	rep, err := Render(decisionFixture())
	if err != nil {
		t.Fatal(err)
	}
	var svg []byte
	for _, c := range rep.Charts {
		if c.Name == "handover" {
			svg = c.SVG
		}
	}
	if svg == nil {
		t.Fatal("no handover chart")
	}
	for _, w := range []string{">never (&gt; 5s)<", "stroke-dasharray"} {
		if !bytes.Contains(svg, []byte(w)) {
			t.Errorf("the handover chart lacks %q: the capped bar is not drawn or not labelled", w)
		}
	}
	path := filepath.Join("testdata", "handover-capped.golden.svg")
	if *update {
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg, want) {
		t.Errorf("%s differs (go test ./bench/output/report -run TestCappedBarGolden -update, then review)\n%s", path, firstDiff(want, svg))
	}
}
