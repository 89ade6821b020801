package htmlreport

import (
	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/opterr"

	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// Page is one HTML report: a header and sections in order.
type Page struct {
	Title    string
	Subtitle string // one line under the title
	Facts    []Fact // key figures in the header
	Sections []Section
	Footer   string // plain text; "" uses the default
}

// Fact is one key figure of the header, e.g. {"p99", "168 ms"}.
type Fact struct{ Name, Value string }

// Section is one part of a page. Body is trusted HTML: build it from the
// charts and tables of this package (which escape their text) or with
// html/template. Scripts in Body run (inline only); nothing can be fetched.
type Section struct {
	ID    string // anchor; "" derives one from the title
	Title string
	Intro string // plain text under the title
	Body  template.HTML
	Note  string // plain text in small print after the body
}

// Add appends sections.
func (p *Page) Add(s ...Section) { p.Sections = append(p.Sections, s...) }

//go:embed page.css
var pageCSS string

//go:embed page.tmpl
var pageSource string

var pageTmpl = template.Must(template.New("page").Parse(pageSource))

// Write writes the page as one self-contained HTML document.
func (p *Page) Write(w io.Writer) error {
	secs := make([]Section, len(p.Sections))
	seen := map[string]bool{}
	for i, s := range p.Sections {
		id := s.ID
		if id == "" {
			id = slug(s.Title)
		}
		for base, n := id, 2; seen[id]; n++ {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		seen[id] = true
		s.ID = id
		secs[i] = s
	}
	footer := p.Footer
	if footer == "" {
		footer = "latscope — where a request's wall-clock latency went. Values come from one Go execution trace; hover a bar for its numbers."
	}
	data := struct {
		*Page
		Sections []Section
		Footer   string
		CSS      template.CSS
	}{p, secs, footer, template.CSS(pageCSS)}
	if err := pageTmpl.Execute(w, data); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// WriteFile writes the page to path via a temporary file and a rename, so
// a browser never sees half a report. An existing path that is not a
// regular file (a symbolic link, device or FIFO) is refused (package
// atomicfile); the error names it.
func (p *Page) WriteFile(path string) error {
	return opterr.Wrap("html", atomicfile.Write(path, p.Write)) // the error names path
}

// slug turns a title into an anchor: lower case letters, digits and dashes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "section"
	}
	return out
}
