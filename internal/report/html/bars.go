package htmlreport

import (
	"html/template"
	"math"
)

// BarChart is a horizontal bar chart with one row per category and one bar
// per series in each row, sharing one value axis.
type BarChart struct {
	Label  string   // accessible name of the chart
	Unit   string   // axis title, e.g. "ms per request"
	Series []Series // one bar per series in every row, top to bottom
	Rows   []BarRow
	Marks  []Mark  // vertical reference lines, e.g. the mean latency
	Max    float64 // axis maximum; 0 takes it from the data and marks
	// Format formats bar values for their labels; nil uses fmtMs for a unit
	// starting with "ms", fmtPct for "%", and plain numbers otherwise.
	Format func(float64) string
}

// Series is one bar of every row.
type Series struct {
	Name  string
	Color string // fill; a row's Colors override it
	Light bool   // pale fill with a solid outline (e.g. goroutine time behind the critical path)
}

// BarRow is one category.
type BarRow struct {
	Label  string    // bold, left of the bars
	Note   string    // small, under the label
	Values []float64 // by series
	Colors []string  // per-series fill override ("" keeps the series colour)
	Texts  []string  // per-series value label override
	Tip    string    // tooltip over the whole row
}

// Mark is a reference line at a value.
type Mark struct {
	Value float64
	Label string
	Color string
}

const (
	chartW   = 1080.0
	labelW   = 300.0
	valueW   = 120.0
	barH     = 13.0
	barGap   = 3.0
	rowPad   = 14.0
	axisH    = 34.0
	legendH  = 26.0
	fontSize = 12.0
)

// SVG draws the chart.
func (c BarChart) SVG() template.HTML {
	nb := max(len(c.Series), 1)
	rowH := math.Max(float64(nb)*(barH+barGap)-barGap+rowPad, 36)
	top := legendH + 18
	h := top + float64(len(c.Rows))*rowH + axisH
	s := newSVG(chartW, h, "bars", c.Label)
	x0, pw := labelW, chartW-labelW-valueW
	hi := c.axisMax()
	xs := func(v float64) float64 { return x0 + pw*math.Max(finite(v), 0)/hi }
	c.legend(s)
	bottom := top + float64(len(c.Rows))*rowH
	for _, t := range ticks(0, hi, 6) {
		s.line(xs(t), top-6, xs(t), bottom, "grid")
		s.text(xs(t), bottom+16, "middle", "tick", fmtNum(t))
	}
	s.text(x0+pw/2, bottom+31, "middle", "axis-title", c.Unit)
	format := c.format()
	for i, r := range c.Rows {
		y := top + float64(i)*rowH
		s.open("g", attr{"class", "row"})
		s.title(r.Tip)
		s.rect(0, y, chartW, rowH, "transparent", "hover", "")
		s.textTip(x0-10, y+rowH/2-1, "end", "label", clip(r.Label, 42), r.Label)
		if r.Note != "" {
			s.text(x0-10, y+rowH/2+13, "end", "note", clip(r.Note, 50))
		}
		by := y + (rowH-(float64(nb)*(barH+barGap)-barGap))/2
		for j, v := range r.Values {
			if j >= nb {
				break
			}
			c.bar(s, r, j, x0, by+float64(j)*(barH+barGap), xs(v)-x0, v, format)
		}
		s.close("g")
	}
	s.line(x0, top-6, x0, bottom, "axis")
	for _, m := range c.Marks {
		if m.Value <= 0 || m.Value > hi {
			continue
		}
		x := xs(m.Value)
		s.open("line", attr{"x1", num(x)}, attr{"y1", num(top - 10)}, attr{"x2", num(x)}, attr{"y2", num(bottom)}, attr{"class", "mark"}, attr{"stroke", m.Color})
		s.close("line")
		s.text(x, top-13, "middle", "mark-label", m.Label)
	}
	return s.html()
}

func (c BarChart) bar(s *svg, r BarRow, j int, x0, y, w, v float64, format func(float64) string) {
	ser := Series{}
	if j < len(c.Series) {
		ser = c.Series[j]
	}
	fill := ser.Color
	if j < len(r.Colors) && r.Colors[j] != "" {
		fill = r.Colors[j]
	}
	class := "bar"
	if ser.Light {
		class = "bar light"
	}
	if w > 0 {
		s.open("rect", attr{"x", num(x0)}, attr{"y", num(y)}, attr{"width", num(math.Max(w, 1))}, attr{"height", num(barH)},
			attr{"fill", fill}, attr{"stroke", fill}, attr{"class", class})
		s.title(ser.Name + ": " + format(v))
		s.close("rect")
	}
	txt := format(v)
	if j < len(r.Texts) && r.Texts[j] != "" {
		txt = r.Texts[j]
	}
	s.text(x0+math.Max(w, 0)+6, y+barH-2.5, "start", "value", txt)
}

func (c BarChart) legend(s *svg) {
	x := labelW
	for _, ser := range c.Series {
		class := "swatch"
		if ser.Light {
			class = "swatch light"
		}
		s.open("rect", attr{"x", num(x)}, attr{"y", "6"}, attr{"width", "14"}, attr{"height", "12"}, attr{"fill", ser.Color}, attr{"stroke", ser.Color}, attr{"class", class})
		s.close("rect")
		s.text(x+20, 16, "start", "legend", ser.Name)
		x += 40 + textWidth(ser.Name, fontSize)
	}
}

func (c BarChart) axisMax() float64 {
	hi := c.Max
	if hi <= 0 {
		for _, r := range c.Rows {
			for _, v := range r.Values {
				hi = math.Max(hi, finite(v))
			}
		}
		for _, m := range c.Marks {
			hi = math.Max(hi, finite(m.Value))
		}
		hi = niceMax(hi, 6)
	}
	return hi
}

func (c BarChart) format() func(float64) string {
	switch {
	case c.Format != nil:
		return c.Format
	case len(c.Unit) >= 2 && c.Unit[:2] == "ms":
		return fmtMs
	case c.Unit == "%" || len(c.Unit) > 0 && c.Unit[0] == '%':
		return fmtPct
	}
	return fmtNum
}
