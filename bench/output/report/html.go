package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
)

// style makes the page readable on a phone (tables scroll sideways, charts
// shrink to the width) and in print (no colours needed to read a verdict,
// charts do not split across pages). No fonts or scripts are loaded.
const style = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;line-height:1.45;max-width:76rem;margin:0 auto;padding:1rem;color:#1a1a1a;background:#fff}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #ccc}h3{font-size:1.1rem}
.scroll{overflow-x:auto;margin:0.75rem 0}
.scroll td:first-child,.scroll thead th:first-child{position:sticky;left:0;background:#fff;z-index:1}.scroll thead th:first-child{background:#f2f2f2}
details{margin:0.75rem 0;border:1px solid #ddd;padding:0.25rem 0.5rem}summary{cursor:pointer;font-weight:bold}
table{border-collapse:collapse;font-size:0.9rem}
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;vertical-align:top}
th{background:#f2f2f2;text-align:left}
tr.group th{background:#fff;border-left:none;border-right:none;padding-top:0.6rem;font-style:italic;font-weight:normal;color:#444}
p,li,figcaption{max-width:56rem}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.num span{white-space:nowrap}
td.code{overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:0.85em}
td:first-child{min-width:9rem}
td.holds{background:#e3f4e3}td.fails{background:#fbe2e2}td.inconclusive{background:#f4f0dc}
td.holds,td.fails,td.inconclusive{font-weight:bold}
figure{margin:1rem 0}figure svg{width:100%;max-width:48rem;height:auto;display:block}
figcaption{font-size:0.85rem;color:#444}
a{color:#1f5fbf}p.warn{border:2px solid #b00;padding:0.5rem;font-weight:bold}
@media (max-width:40rem){body{padding:0.5rem}td:first-child{min-width:6rem}
figure{overflow-x:auto}figure svg{min-width:34rem}figcaption{position:sticky;left:0}
table.cards,table.cards tbody,table.cards tr,table.cards td{display:block}table.cards thead{display:none}
table.cards tr{border:1px solid #ccc;margin-bottom:0.75rem}table.cards td{border:none;border-bottom:1px solid #eee}
table.cards td::before{content:attr(data-label) ": ";font-weight:bold;color:#444}}
@media print{body{max-width:none;padding:0}nav{display:none}figure,table{break-inside:avoid}.scroll{overflow:visible}h2{break-after:avoid}}
`

// html renders d as one self-contained HTML page: inline CSS, charts as
// inline SVG, nothing fetched from the network.
func (d *document) html() []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(d.title), style)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(d.title))
	htmlBlocks(&b, d.blocks)
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// htmlBlocks renders blocks into b; a details block becomes a collapsed
// <details> element holding its blocks.
func htmlBlocks(b *strings.Builder, blocks []block) {
	for _, bl := range blocks {
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(b, "<h%d id=\"%s\">%s</h%d>\n", x.level, html.EscapeString(x.id), html.EscapeString(x.text), x.level)
		case paragraph:
			if x.strong {
				fmt.Fprintf(b, "<p class=\"warn\">%s</p>\n", htmlText(x.text))
			} else {
				fmt.Fprintf(b, "<p>%s</p>\n", htmlText(x.text))
			}
		case list:
			b.WriteString("<ul>\n")
			for _, it := range x.items {
				fmt.Fprintf(b, "<li>%s</li>\n", htmlText(it))
			}
			b.WriteString("</ul>\n")
		case links:
			b.WriteString("<ul>\n")
			for _, l := range x.items {
				fmt.Fprintf(b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(l.href), html.EscapeString(l.text))
			}
			b.WriteString("</ul>\n")
		case table:
			if x.cards {
				b.WriteString("<div class=\"scroll\"><table class=\"cards\">\n<thead><tr>")
			} else {
				b.WriteString("<div class=\"scroll\"><table>\n<thead><tr>")
			}
			for _, h := range x.head {
				fmt.Fprintf(b, "<th>%s</th>", breakable(h))
			}
			b.WriteString("</tr></thead>\n<tbody>\n")
			for _, row := range x.rows {
				if isGroup(row) {
					fmt.Fprintf(b, "<tr class=\"group\"><th colspan=\"%d\" scope=\"rowgroup\">%s</th></tr>\n", len(x.head), html.EscapeString(row[0].text))
					continue
				}
				b.WriteString("<tr>")
				for i, c := range row {
					class := c.class
					if class == "" && !x.isLabel(i) {
						class = "num"
					}
					b.WriteString("<td")
					if class != "" {
						fmt.Fprintf(b, " class=\"%s\"", class)
					}
					if x.cards && i < len(x.head) {
						fmt.Fprintf(b, " data-label=\"%s\"", html.EscapeString(x.head[i]))
					}
					if c.title != "" {
						fmt.Fprintf(b, " title=\"%s\"", html.EscapeString(c.title))
					}
					if class == "num" {
						fmt.Fprintf(b, ">%s</td>", numberCell(c.text))
					} else {
						fmt.Fprintf(b, ">%s</td>", htmlInline(c.text))
					}
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</tbody>\n</table></div>\n")
		case contents:
			b.WriteString("<nav><p>Contents:")
			for i, h := range x.entries {
				if i > 0 {
					b.WriteString(" ·")
				}
				fmt.Fprintf(b, " <a href=\"#%s\">%s</a>", html.EscapeString(h.id), html.EscapeString(h.text))
			}
			b.WriteString("</p></nav>\n")
		case details:
			fmt.Fprintf(b, "<details id=\"%s\">\n<summary>%s</summary>\n", html.EscapeString(x.id), html.EscapeString(x.summary))
			htmlBlocks(b, x.blocks)
			b.WriteString("</details>\n")
		case chart:
			fmt.Fprintf(b, "<figure id=\"chart-%s\">\n%s\n<figcaption>%s</figcaption>\n</figure>\n",
				html.EscapeString(x.name), inlineSVG(x.svg), html.EscapeString(x.caption))
		}
	}
}

// htmlInline escapes s for HTML, its "**…**" emphasis as <strong>.
func htmlInline(s string) string {
	return withStrong(s, html.EscapeString, func(x string) string { return "<strong>" + html.EscapeString(x) + "</strong>" })
}

// inlineSVG turns a standalone SVG document into an element for an HTML
// page: no XML prolog or generator comment, and no fixed width and height
// so that CSS scales it (the viewBox keeps the aspect ratio).
func inlineSVG(svg []byte) string {
	s := svg
	if i := bytes.Index(s, []byte("<svg")); i >= 0 {
		s = s[i:]
	}
	out := string(bytes.TrimSpace(s))
	if end := strings.Index(out, ">"); end > 0 {
		open := out[:end]
		open = dropAttr(open, "width")
		open = dropAttr(open, "height")
		out = open + ` role="img"` + out[end:]
	}
	return out
}

// dropAttr removes the first attribute name="..." from an opening tag.
func dropAttr(tag, name string) string {
	i := strings.Index(tag, " "+name+"=\"")
	if i < 0 {
		return tag
	}
	j := strings.Index(tag[i+len(name)+3:], "\"")
	if j < 0 {
		return tag
	}
	return tag[:i] + tag[i+len(name)+3+j+1:]
}

// breakable lets a column heading wrap after the underscores of a metric
// name ("fifo_inversions_per_1k"), which browsers do not break at.
func breakable(text string) string {
	return strings.ReplaceAll(html.EscapeString(text), "_", "_<wbr>")
}

// numberCell lets a figure's spread wrap below its median on a narrow
// column ("121.8 (114.1–127.0)"), but never inside either part.
func numberCell(text string) string {
	median, spread, ok := strings.Cut(text, " (")
	if !ok {
		return "<span>" + html.EscapeString(text) + "</span>"
	}
	return "<span>" + html.EscapeString(median) + "</span> <span>(" + html.EscapeString(spread) + "</span>"
}
