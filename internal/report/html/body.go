package htmlreport

import (
	"html/template"
	"strings"
)

// body builds a section's HTML from escaped pieces.
type body struct{ b strings.Builder }

func (b *body) h3(text string) { b.b.WriteString("<h3>" + esc(text) + "</h3>") }

// p writes a paragraph; class may be "".
func (b *body) p(class, text string) {
	b.b.WriteString(`<p class="` + esc(class) + `">` + esc(text) + "</p>")
}

// lead writes a paragraph whose odd-numbered parts are bold.
func (b *body) lead(parts ...string) {
	b.b.WriteString(`<p class="lead">`)
	for i, s := range parts {
		if i%2 == 1 {
			b.b.WriteString("<strong>" + esc(s) + "</strong>")
		} else {
			b.b.WriteString(esc(s))
		}
	}
	b.b.WriteString("</p>")
}

func (b *body) raw(h template.HTML) { b.b.WriteString(string(h)) }

// legendItem is one entry of an HTML legend row.
type legendItem struct {
	color, name string
	style       string // "", "hatched", "outline"
}

func (b *body) legend(items []legendItem) {
	if len(items) == 0 {
		return
	}
	b.b.WriteString(`<div class="legend-row">`)
	for _, it := range items {
		b.b.WriteString(`<span><i class="` + esc(it.style) + `" style="background-color: ` + esc(it.color) + `"></i>` + esc(it.name) + "</span>")
	}
	b.b.WriteString("</div>")
}

// details wraps h in a collapsed <details> element.
func (b *body) details(summary string, h template.HTML) {
	b.b.WriteString("<details><summary>" + esc(summary) + "</summary>" + string(h) + "</details>")
}

func (b *body) html() template.HTML { return template.HTML(b.b.String()) } // pieces were escaped
