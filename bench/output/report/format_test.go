package report

import (
	"regexp"
	"strings"
	"testing"
)

// A claim that quotes its source's bold reads as bold in both renderings,
// never as raw or escaped asterisks.
func TestClaimBoldIsBold(t *testing.T) {
	const quote = "The manual gives **no promise about the sequence of the waiters**. There is no FIFO."
	var d document
	d.add(table{head: []string{"claim"}, rows: [][]cell{{{text: quote}}}, leftAligned: true})
	d.p(quote)
	md, page := string(d.markdown()), string(d.html())
	if strings.Contains(md, `\*`) || !strings.Contains(md, "| The manual gives **no promise about the sequence of the waiters**. There is no FIFO. |") {
		t.Errorf("report.md does not keep the bold:\n%s", md)
	}
	if strings.Contains(page, "**") || strings.Count(page, "<strong>no promise about the sequence of the waiters</strong>") != 2 {
		t.Errorf("report.html shows raw asterisks:\n%s", page)
	}
	// A lone asterisk is text, not markup.
	if got := mdInline("a * b"); got != `a \* b` {
		t.Errorf("mdInline(a * b) = %q", got)
	}
}

// Every chart's axes read as the report's numbers: latency in µs, never
// "us", and no float noise of the ticker's steps (-0.8000000000000002).
func TestChartAxesReadAsNumbers(t *testing.T) {
	rep, err := Render(loadFullRun(t))
	if err != nil {
		t.Fatal(err)
	}
	noise := regexp.MustCompile(`>-?[0-9.,]*0000000[0-9]+<`)
	micro := 0
	for _, c := range rep.Charts {
		svg := string(c.SVG)
		if m := noise.FindString(svg); m != "" {
			t.Errorf("%s: tick %s", c.Name, m)
		}
		if strings.Contains(svg, "(us") || strings.Contains(svg, " us ") || strings.Contains(svg, ", us") {
			t.Errorf("%s: an axis says us", c.Name)
		}
		micro += strings.Count(svg, "µs, log scale")
	}
	if micro == 0 {
		t.Error("no latency axis in µs")
	}
}
