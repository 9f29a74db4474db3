package report

import (
	"html"
	"regexp"
	"strings"
)

// repository is where a code citation of the report links to: the root
// of the repository as seen from a run's folder, reports/<run>/ (a
// relative link, so it works on the repository's web view and in a
// checkout alike).
const repository = "../../"

// codeCitation is a citation of a file of this repository in text, such
// as "monolock/internal/locktable/table.go:185" (a path with a folder, a
// Go file and a line).
var codeCitation = regexp.MustCompile(`\b((?:[a-z0-9_.-]+/)+[a-z0-9_]+\.go):([0-9]+)\b`)

// citationURL is the address of a cited line in the repository.
func citationURL(path, line string) string { return repository + path + "#L" + line }

// mdText escapes text for Markdown and links its code citations.
func mdText(text string) string {
	return withCitations(text, mdInline, func(cite, path, line string) string {
		return "[" + mdEscape(cite) + "](" + citationURL(path, line) + ")"
	})
}

// htmlText escapes text for HTML and links its code citations.
func htmlText(text string) string {
	return withCitations(text, htmlInline, func(cite, path, line string) string {
		return `<a href="` + html.EscapeString(citationURL(path, line)) + `">` + html.EscapeString(cite) + "</a>"
	})
}

func withCitations(text string, escape func(string) string, link func(cite, path, line string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range codeCitation.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(escape(text[last:m[0]]))
		b.WriteString(link(text[m[0]:m[1]], text[m[2]:m[3]], text[m[4]:m[5]]))
		last = m[1]
	}
	b.WriteString(escape(text[last:]))
	return b.String()
}
