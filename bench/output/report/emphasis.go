package report

import "strings"

// withStrong escapes text with escape, but renders each "**…**" pair as
// strong emphasis with strong: claims quote their sources' Markdown, whose
// bold must read as bold, not as raw asterisks, in both renderings.
func withStrong(text string, escape, strong func(string) string) string {
	var b strings.Builder
	for {
		open := strings.Index(text, "**")
		if open < 0 {
			break
		}
		end := strings.Index(text[open+2:], "**")
		if end <= 0 {
			break
		}
		b.WriteString(escape(text[:open]))
		b.WriteString(strong(text[open+2 : open+2+end]))
		text = text[open+2+end+2:]
	}
	b.WriteString(escape(text))
	return b.String()
}
