package report

import (
	"fmt"
	"strings"
)

// markdown renders d as GitHub-flavoured Markdown. Charts are referenced as
// charts/<name>.svg, the files Write puts beside report.md.
func (d *document) markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", mdEscape(d.title))
	mdBlocks(&b, d.blocks, true)
	return []byte(b.String())
}

// mdBlocks renders blocks into b. With linked, a details block is one
// line linking to its section of details.md; without, its blocks inline.
func mdBlocks(b *strings.Builder, blocks []block, linked bool) {
	for _, bl := range blocks {
		b.WriteString("\n")
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(b, "%s %s\n", strings.Repeat("#", x.level), mdEscape(x.text))
		case paragraph:
			if x.strong {
				fmt.Fprintf(b, "**%s**\n", mdText(x.text))
			} else {
				fmt.Fprintf(b, "%s\n", mdText(x.text))
			}
		case list:
			for _, it := range x.items {
				fmt.Fprintf(b, "- %s\n", mdText(it))
			}
		case links:
			for _, l := range x.items {
				fmt.Fprintf(b, "- [%s](%s)\n", mdEscape(l.text), strings.ReplaceAll(l.href, " ", "%20"))
			}
		case table:
			b.WriteString("|")
			for _, h := range x.head {
				fmt.Fprintf(b, " %s |", mdCell(h))
			}
			b.WriteString("\n|")
			for i := range x.head {
				if x.isLabel(i) {
					b.WriteString("---|")
				} else {
					b.WriteString("---:|")
				}
			}
			b.WriteString("\n")
			for _, row := range x.rows {
				if isGroup(row) {
					fmt.Fprintf(b, "| **%s** |%s\n", mdCell(row[0].text), strings.Repeat("  |", len(x.head)-1))
					continue
				}
				b.WriteString("|")
				for _, c := range row {
					fmt.Fprintf(b, " %s |", mdCell(c.text))
				}
				b.WriteString("\n")
			}
		case details:
			if linked {
				fmt.Fprintf(b, "Details: [%s](%s#%s)\n", mdEscape(x.summary), DetailsFile, x.id)
				continue
			}
			fmt.Fprintf(b, "**%s**\n", mdEscape(x.summary))
			mdBlocks(b, x.blocks, false)
		case chart:
			fmt.Fprintf(b, "![%s](charts/%s.svg)\n", mdEscape(x.caption), x.name)
		case contents:
			b.WriteString("Contents:")
			for i, h := range x.entries {
				sep := " ·"
				if i == 0 {
					sep = ""
				}
				fmt.Fprintf(b, "%s [%s](#%s)", sep, mdEscape(h.text), h.id)
			}
			b.WriteString("\n")
		}
	}
}

// detailsMarkdown renders details.md: the title, then each details block
// of d (in order) as a section of its own under the heading the main
// report links to.
func (d *document) detailsMarkdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nThe full tables, parameters, figures not measured and errors behind [the report](%s), section by section.\n", mdEscape("Details — "+d.title), MarkdownFile)
	for _, x := range d.allDetails() {
		fmt.Fprintf(&b, "\n## %s\n", mdEscape(x.summary))
		mdBlocks(&b, x.blocks, false)
	}
	return []byte(b.String())
}

// mdEscape keeps generated text (contender ids, notes, error messages) from
// being read as Markdown markup.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

func mdEscape(s string) string { return mdEscaper.Replace(s) }

// mdInline escapes s for Markdown, keeping its "**…**" emphasis.
func mdInline(s string) string {
	return withStrong(s, mdEscape, func(x string) string { return "**" + mdEscape(x) + "**" })
}

func mdCell(s string) string {
	if s == "" {
		return " "
	}
	return strings.ReplaceAll(mdInline(s), "|", `\|`)
}
