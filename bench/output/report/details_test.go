package report

import (
	"regexp"
	"strings"
	"testing"
)

// TestDetailsAppendix: every details block of report.md is one link to a
// heading that exists in details.md, the full figure tables live only in
// details.md, and report.html holds the same matter collapsed.
func TestDetailsAppendix(t *testing.T) {
	rep, err := Render(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	md, det, page := string(rep.Markdown), string(rep.Details), string(rep.HTML)
	links := regexp.MustCompile(`\]\(`+regexp.QuoteMeta(DetailsFile)+`#([a-z0-9_-]+)\)`).FindAllStringSubmatch(md, -1)
	if len(links) < 5 {
		t.Fatalf("report.md links to details.md %d times, want one per section", len(links))
	}
	for _, l := range links {
		if !strings.Contains(page, `<details id="`+l[1]+`">`) {
			t.Errorf("report.html has no collapsed <details> for %s", l[1])
		}
	}
	heads := map[string]bool{}
	for _, line := range strings.Split(det, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			heads[anchor(h)] = true
		}
	}
	for _, l := range links {
		if !heads[l[1]] {
			t.Errorf("report.md links to details.md#%s, which has no such heading", l[1])
		}
	}
	if strings.Contains(md, "All figures of ") || !strings.Contains(det, "All figures of ") {
		t.Error("the full figure tables belong in details.md, not report.md")
	}
	if !strings.Contains(md, "](details.md#glossary)") || !strings.Contains(det, "## Glossary") || !strings.Contains(det, "Jain index: ") {
		t.Error("the glossary is not in details.md with a link from report.md")
	}
}
