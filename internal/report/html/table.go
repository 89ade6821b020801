package htmlreport

import (
	"bytes"
	"html/template"
)

// Table is a data table. Text is escaped; Bar draws a small inline bar
// behind a cell (e.g. a share or a predicted mean against the measured one).
type Table struct {
	Caption string
	Columns []Column
	Rows    [][]Cell
	Class   string // extra CSS class: "compact"
}

// Column is a table header.
type Column struct {
	Name string
	Num  bool   // right-aligned, tabular figures
	Tip  string // tooltip on the header
}

// Cell is one table cell.
type Cell struct {
	Text  string
	Bar   float64 // 0–1: fraction of the cell filled by a pale bar; 0 none
	Color string  // bar or swatch colour ("" is the default blue)
	Class string  // "good", "bad", "inconclusive" (the verdicts pass, fail, inconclusive), "muted", "strong", "swatch" (a colour dot before the text)
	Tip   string
}

// Pct returns the bar width of a cell as a CSS percentage.
func (c Cell) Pct() float64 { return 100 * min(max(finite(c.Bar), 0), 1) }

// DotColor returns the swatch colour, the bar colour by default.
func (c Cell) DotColor() string {
	if c.Color != "" {
		return c.Color
	}
	return colorWall
}

var tableTmpl = template.Must(template.New("table").Parse(`<table class="data {{.Class}}">
{{- with .Caption}}<caption>{{.}}</caption>{{end}}
<thead><tr>{{range .Columns}}<th{{if .Num}} class="num"{{end}}{{with .Tip}} title="{{.}}"{{end}}>{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{- range $r := .Rows}}<tr>{{range $i, $c := $r}}<td class="{{if $.IsNum $i}}num {{end}}{{$c.Class}}"{{with $c.Tip}} title="{{.}}"{{end}}>
{{- if gt $c.Bar 0.0}}<span class="cellbar" style="width: {{printf "%.1f" $c.Pct}}%; background: {{$c.DotColor}}"></span>{{end}}
{{- if eq $c.Class "swatch"}}<span class="dot" style="background: {{$c.DotColor}}"></span>{{end}}{{$c.Text}}</td>{{end}}</tr>
{{end -}}
</tbody></table>`))

// IsNum reports whether column i is numeric.
func (t Table) IsNum(i int) bool { return i < len(t.Columns) && t.Columns[i].Num }

// HTML renders the table.
func (t Table) HTML() (template.HTML, error) {
	var b bytes.Buffer
	if err := tableTmpl.Execute(&b, t); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // produced by html/template
}
