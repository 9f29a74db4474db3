package report

// Page is a page of text in the report's document model, for the other
// Markdown a run is read in (the comparison of two runs): its text is
// escaped and laid out by the report's own Markdown renderer.
type Page struct{ d document }

// NewPage returns an empty page under the title.
func NewPage(title string) *Page { return &Page{d: document{title: title}} }

// Heading adds a section heading.
func (p *Page) Heading(text string) { p.d.h2(text) }

// Paragraph adds a paragraph; a strong one stands out (a warning).
func (p *Page) Paragraph(text string, strong bool) {
	p.d.add(paragraph{text: text, strong: strong})
}

// List adds a bulleted list.
func (p *Page) List(items []string) { p.d.add(list{items: items}) }

// Table adds a table whose first labels columns are left-aligned text and
// the others right-aligned figures.
func (p *Page) Table(head []string, labels int, rows [][]string) {
	t := table{head: head, labels: labels}
	for _, r := range rows {
		row := make([]cell, len(r))
		for i, text := range r {
			row[i] = cell{text: text}
		}
		t.rows = append(t.rows, row)
	}
	p.d.add(t)
}

// Markdown renders the page as GitHub-flavoured Markdown.
func (p *Page) Markdown() []byte { return p.d.markdown() }
