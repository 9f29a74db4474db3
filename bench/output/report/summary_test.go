package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummary: the end-of-run summary renders through the document
// model: a table per scenario with readers' labels and units, each row in
// one unit.
func TestSummary(t *testing.T) {
	var b bytes.Buffer
	if err := Summary(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"# monolock-bench run ", "## latency", "| variant | metric | unit |", "| µs |", "Median across repetitions (min–max)."} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| us |") {
		t.Error("summary shows the ASCII unit us")
	}
}
