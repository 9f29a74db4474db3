package report

// A document is the report as a list of blocks, rendered once to Markdown
// and once to HTML so that both say exactly the same thing.
type document struct {
	title  string
	blocks []block
}

// block is one of heading, paragraph, list, table, chart.
type block interface{ isBlock() }

type heading struct {
	level int    // 2 or 3 (the title is level 1)
	text  string // plain text
	id    string // anchor, stable across runs
}

// paragraph is plain text; strong marks it as a warning (partial run).
type paragraph struct {
	text   string
	strong bool
}

type list struct{ items []string }

// contents lists the sections with links to their headings.
type contents struct{ entries []heading }

// table is a grid of cells; the first labels columns (at least one) are
// labels, the others right-aligned figures unless leftAligned.
type table struct {
	head        []string
	rows        [][]cell
	labels      int
	leftAligned bool
	// cards lets a narrow screen show each row as a block of labelled
	// lines instead of a wide grid (for tables of prose).
	cards bool
}

// isLabel reports whether column i is left-aligned text.
func (t table) isLabel(i int) bool { return t.leftAligned || i < max(t.labels, 1) }

// cell is one table cell; class colours it in HTML ("holds", "fails",
// "inconclusive") and is ignored in Markdown. A row of one cell of class
// groupClass is a heading row over the rows of one group (a family of
// contenders).
type cell struct {
	text  string
	class string
	// title is the figure behind a verdict cell, shown on hover in HTML.
	title string
}

const groupClass = "group"

// isGroup reports whether a row is a group heading row.
func isGroup(row []cell) bool { return len(row) == 1 && row[0].class == groupClass }

// chart is an SVG chart: written to charts/<name>.svg beside report.md and
// inlined into report.html.
type chart struct {
	name    string // file stem, e.g. "latency-w1"
	caption string
	svg     []byte // deterministic SVG document
}

// links is a list of links to files of the run folder (relative paths).
type links struct{ items []link }

type link struct{ text, href string }

func (heading) isBlock()   {}
func (paragraph) isBlock() {}
func (list) isBlock()      {}
func (table) isBlock()     {}
func (chart) isBlock()     {}
func (contents) isBlock()  {}
func (links) isBlock()     {}

// h2 and h3 add headings whose ids are the anchors GitHub gives the same
// headings in report.md, so that links work in both renderings.
func (d *document) h2(text string) { d.blocks = append(d.blocks, heading{2, text, anchor(text)}) }
func (d *document) h3(text string) { d.blocks = append(d.blocks, heading{3, text, anchor(text)}) }

// withContents inserts, at position at, a list of links to every level-2
// heading.
func (d *document) withContents(at int) {
	var c contents
	for _, b := range d.blocks {
		if h, ok := b.(heading); ok && h.level == 2 {
			c.entries = append(c.entries, h)
		}
	}
	d.blocks = append(d.blocks[:at], append([]block{c}, d.blocks[at:]...)...)
}
func (d *document) p(text string) { d.blocks = append(d.blocks, paragraph{text: text}) }
func (d *document) add(b block)   { d.blocks = append(d.blocks, b) }
