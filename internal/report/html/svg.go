package htmlreport

import (
	"html/template"
	"strconv"
	"strings"
)

// svg builds one inline SVG element. Every string it is given is escaped;
// numbers are formatted with one decimal.
type svg struct {
	b strings.Builder
}

// newSVG starts an SVG of the given size in px; label is its accessible name.
func newSVG(w, h float64, class, label string) *svg {
	s := &svg{}
	s.b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="chart `)
	s.b.WriteString(esc(class))
	s.b.WriteString(`" viewBox="0 0 `)
	s.b.WriteString(num(w) + " " + num(h))
	s.b.WriteString(`" width="` + num(w) + `" role="img" aria-label="`)
	s.b.WriteString(esc(label))
	s.b.WriteString(`">`)
	return s
}

// attr is one attribute; its value is escaped.
type attr struct{ k, v string }

func (s *svg) open(tag string, attrs ...attr) {
	s.b.WriteByte('<')
	s.b.WriteString(tag)
	for _, a := range attrs {
		if a.v == "" {
			continue
		}
		s.b.WriteByte(' ')
		s.b.WriteString(a.k)
		s.b.WriteString(`="`)
		s.b.WriteString(esc(a.v))
		s.b.WriteByte('"')
	}
	s.b.WriteByte('>')
}

func (s *svg) close(tag string) { s.b.WriteString("</" + tag + ">") }

// rect draws a rectangle with an optional tooltip.
func (s *svg) rect(x, y, w, h float64, fill, class, tip string) {
	s.open("rect", attr{"x", num(x)}, attr{"y", num(y)}, attr{"width", num(w)}, attr{"height", num(h)},
		attr{"fill", fill}, attr{"class", class})
	s.title(tip)
	s.close("rect")
}

// title adds a tooltip to the element just opened.
func (s *svg) title(tip string) {
	if tip != "" {
		s.b.WriteString("<title>" + esc(tip) + "</title>")
	}
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	s.open("line", attr{"x1", num(x1)}, attr{"y1", num(y1)}, attr{"x2", num(x2)}, attr{"y2", num(y2)}, attr{"class", class})
	s.close("line")
}

// text writes txt at x, y; anchor is start, middle or end.
func (s *svg) text(x, y float64, anchor, class, txt string) {
	s.textTip(x, y, anchor, class, txt, "")
}

func (s *svg) textTip(x, y float64, anchor, class, txt, tip string) {
	s.open("text", attr{"x", num(x)}, attr{"y", num(y)}, attr{"text-anchor", anchor}, attr{"class", class})
	s.title(tip)
	s.b.WriteString(esc(txt))
	s.close("text")
}

// path draws an SVG path from points already formatted by pathData.
func (s *svg) path(d, stroke, fill, class string) {
	s.open("path", attr{"d", d}, attr{"stroke", stroke}, attr{"fill", fill}, attr{"class", class})
	s.close("path")
}

func (s *svg) circle(x, y, r float64, fill, class, tip string) {
	s.open("circle", attr{"cx", num(x)}, attr{"cy", num(y)}, attr{"r", num(r)}, attr{"fill", fill}, attr{"class", class})
	s.title(tip)
	s.close("circle")
}

// html ends the SVG.
func (s *svg) html() template.HTML {
	s.b.WriteString("</svg>")
	return template.HTML(s.b.String()) // every piece was escaped on the way in
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
