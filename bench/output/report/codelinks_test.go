package report

import "testing"

// TestCodeCitationsLink: a citation of a repository file links to the
// cited line; other text is escaped as before.
func TestCodeCitationsLink(t *testing.T) {
	text := "a lease is a timer (monolock/internal/locktable/table.go:185), see_also *this*"
	wantMD := `a lease is a timer ([monolock/internal/locktable/table.go:185](../../monolock/internal/locktable/table.go#L185)), see\_also \*this\*`
	if got := mdText(text); got != wantMD {
		t.Errorf("mdText:\n got %s\nwant %s", got, wantMD)
	}
	wantHTML := `a lease is a timer (<a href="../../monolock/internal/locktable/table.go#L185">monolock/internal/locktable/table.go:185</a>), see_also *this*`
	if got := htmlText(text); got != wantHTML {
		t.Errorf("htmlText:\n got %s\nwant %s", got, wantHTML)
	}
	if got := mdText("table.go:158 alone"); got != "table.go:158 alone" {
		t.Errorf("a bare file name is not a citation of a path: %s", got)
	}
}
