package report

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// fullRunPath is the full reference run of 2026-12-03 (17 contenders, 9
// scenarios, 3 repetitions, 55.5 min), its results.json as measured but
// for the histograms the report does not draw (throughput's, the open
// loop's, ...), gzipped: the report renders from it exactly as from the
// whole file. loadFullRun completes it with today's declarations, as
// monolock-bench report does.
const fullRunPath = "testdata/full-20261203T120600Z.json.gz"

// maxMarkdown is the most report.md may weigh: the findings, a key table
// and a chart per section, the rest in details.md.
const maxMarkdown = 40 << 10

func loadFullRun(t *testing.T) *results.Results {
	t.Helper()
	f, err := os.Open(fullRunPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return declared(r)
}

// The full reference run's report.md fits in 40 KB, opens with the
// decision section, describes every contender rather than repeating its
// name, and counts the claims by kind.
func TestFullRunReport(t *testing.T) {
	rep, err := Render(loadFullRun(t))
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep.Markdown)
	if n := len(md); n > maxMarkdown {
		t.Errorf("report.md of the full run is %d bytes, more than %d", n, maxMarkdown)
	}
	if first := strings.Index(md, "\n## "); first < 0 || !strings.HasPrefix(md[first:], "\n## Which lock for which job\n") {
		t.Error("the decision section does not open the report")
	}
	for _, w := range []string{
		"| other system | redlock | Redlock keeps granting with two of five masters down. | contradicted: 2.11 s |",
		"| other system | redlock-fast | Redlock keeps granting with two of five masters down. | holds |",
		"Statements about other systems: 23 of 28 hold, 3 contradicted, 2 inconclusive.",
		"Below the floor of their kind in every repetition: monolock-warm 103.0 µs (97.6–103.3, n=3) against tcp-floor 107.6 µs (105.6–111.7, n=3)",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	// What each contender is: the appendix's table.
	if w := "| redlock-fast | redlock with per-master dial, read and write timeouts of 50ms;"; !strings.Contains(string(rep.Details), w) {
		t.Errorf("details.md lacks %q", w)
	}
	for _, c := range []string{"monolock", "redis", "redlock-fast", "etcd"} {
		if strings.Contains(md, "| "+c+" | "+c+" |") {
			t.Errorf("the contenders table says %q is %q", c, c)
		}
	}
	if !bytes.Contains(rep.Details, []byte("### Promises of the project's lock")) {
		t.Error("details.md lacks the claims by kind")
	}
}
