package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Timeline is a stack of panels over one shared x axis (usually seconds):
// e.g. app and DB duration per request on top, CPU throttling and PSI
// tracks below, with fault-injection windows as shaded bands.
type Timeline struct {
	Label      string
	XLabel     string  // axis title, e.g. "seconds since the run began"
	XMin, XMax float64 // both 0 takes the range from the data
	Bands      []Band  // shaded x ranges across all panels
	Panels     []Panel
}

// Panel is one track of a Timeline.
type Panel struct {
	Title  string
	Unit   string  // y unit, shown with the title
	Height float64 // plot height in px; 0 means 120
	YMax   float64 // 0 takes it from the data
	// FitY starts the y axis near the smallest value instead of at 0, for
	// series whose variation matters more than their size (latencies).
	FitY  bool
	Lines []Line
	Marks []Mark // horizontal reference lines
}

// Line is one series of a panel.
type Line struct {
	Name   string
	Color  string // "" picks from Palette
	Style  Style
	Points []Point // in x order for lines, steps and areas
}

// Point is one observation.
type Point struct{ X, Y float64 }

// Band is a shaded x range.
type Band struct {
	From, To float64
	Label    string
	Color    string // "" is a pale amber
}

// Style is how a Line is drawn.
type Style uint8

// Line styles.
const (
	StyleLine   Style = iota // straight segments between points
	StyleStep                // a value held until the next point (counters, PSI)
	StyleArea                // a step filled down to zero
	StylePoints              // one dot per point (per-request latencies)
)

// SVG draws the timeline.
func (tl Timeline) SVG() template.HTML {
	const left, right, titleH, gap, axisH = 70.0, 24.0, 24.0, 14.0, 40.0
	lo, hi := tl.xRange()
	h := axisH + 6
	if tl.bandLabels() {
		h += 16
	}
	for _, p := range tl.Panels {
		h += titleH + panelHeight(p) + gap
	}
	s := newSVG(chartW, h, "timeline", tl.Label)
	pw := chartW - left - right
	xs := func(x float64) float64 { return left + pw*(finite(x)-lo)/(hi-lo) }
	y := 6.0
	color := 0
	for _, p := range tl.Panels {
		ph := panelHeight(p)
		tl.panel(s, p, &color, xs, lo, hi, left, pw, y+titleH, ph)
		y += titleH + ph + gap
	}
	base := y - gap
	for _, t := range ticks(lo, hi, 10) {
		s.line(xs(t), base, xs(t), base+4, "axis")
		s.text(xs(t), base+17, "middle", "tick", fmtNum(t))
	}
	for _, b := range tl.Bands {
		if b.Label != "" && b.To >= lo && b.From <= hi {
			x1, x2 := xs(math.Max(b.From, lo)), xs(math.Min(b.To, hi))
			s.text((x1+x2)/2, base+32, "middle", "band-label", b.Label)
		}
	}
	s.text(left+pw/2, h-6, "middle", "axis-title", tl.XLabel)
	return s.html()
}

func (tl Timeline) bandLabels() bool {
	for _, b := range tl.Bands {
		if b.Label != "" {
			return true
		}
	}
	return false
}

// bands shades the bands over one panel's plot area.
func (tl Timeline) bands(s *svg, xs func(float64) float64, lo, hi, top, ph float64) {
	for _, b := range tl.Bands {
		if b.To < lo || b.From > hi {
			continue
		}
		color := b.Color
		if color == "" {
			color = "#f5c26b"
		}
		x1, x2 := xs(math.Max(b.From, lo)), xs(math.Min(b.To, hi))
		s.rect(x1, top, math.Max(x2-x1, 1), ph, color, "band", b.Label)
	}
}

func panelHeight(p Panel) float64 {
	if p.Height > 0 {
		return p.Height
	}
	return 120
}

func (tl Timeline) xRange() (lo, hi float64) {
	lo, hi = tl.XMin, tl.XMax
	if lo == 0 && hi == 0 {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, p := range tl.Panels {
			for _, l := range p.Lines {
				for _, pt := range l.Points {
					lo, hi = math.Min(lo, finite(pt.X)), math.Max(hi, finite(pt.X))
				}
			}
		}
		for _, b := range tl.Bands {
			lo, hi = math.Min(lo, b.From), math.Max(hi, b.To)
		}
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

func (tl Timeline) panel(s *svg, p Panel, color *int, xs func(float64) float64, xlo, xhi, left, pw, top, ph float64) {
	title := p.Title
	if p.Unit != "" {
		title += " (" + p.Unit + ")"
	}
	s.text(left, top-8, "start", "panel-title", title)
	yMin, yMax := p.yRange()
	ys := func(v float64) float64 {
		return top + ph - ph*(math.Min(math.Max(finite(v), yMin), yMax)-yMin)/(yMax-yMin)
	}
	s.rect(left, top, pw, ph, "none", "frame", "")
	tl.bands(s, xs, xlo, xhi, top, ph)
	for _, t := range ticks(yMin, yMax, 3) {
		s.line(left, ys(t), left+pw, ys(t), "grid")
		s.text(left-8, ys(t)+4, "end", "tick", fmtNum(t))
	}
	for _, m := range p.Marks {
		s.open("line", attr{"x1", num(left)}, attr{"y1", num(ys(m.Value))}, attr{"x2", num(left + pw)}, attr{"y2", num(ys(m.Value))}, attr{"class", "mark"}, attr{"stroke", m.Color})
		s.close("line")
		ly := ys(m.Value) - 4
		if ly < top+12 {
			ly = ys(m.Value) + 13 // below a line at the top of the plot
		}
		s.open("text", attr{"x", num(left + 4)}, attr{"y", num(ly)}, attr{"class", "mark-label"}, attr{"fill", m.Color})
		s.b.WriteString(esc(m.Label))
		s.close("text")
	}
	colors := make([]string, len(p.Lines))
	for i, l := range p.Lines {
		colors[i] = lineColor(l, color)
	}
	lx := left + pw
	for i := len(p.Lines) - 1; i >= 0; i-- {
		lx -= textWidth(p.Lines[i].Name, fontSize) + 30
		s.rect(lx, top-18, 12, 10, colors[i], "swatch", "")
		s.text(lx+16, top-9, "start", "legend", p.Lines[i].Name)
	}
	for i, l := range p.Lines {
		drawLine(s, l, colors[i], xs, ys, top+ph, p.Unit)
	}
}

// yRange returns the panel's y axis: from 0 (or near the data with FitY)
// to a nice maximum.
func (p Panel) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), p.YMax
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			lo = math.Min(lo, finite(pt.Y))
			if p.YMax <= 0 {
				hi = math.Max(hi, finite(pt.Y))
			}
		}
	}
	for _, m := range p.Marks {
		lo = math.Min(lo, finite(m.Value))
		if p.YMax <= 0 {
			hi = math.Max(hi, finite(m.Value))
		}
	}
	if !p.FitY || math.IsInf(lo, 0) || lo <= 0 {
		lo = 0
	}
	if lo > 0 {
		step := niceStep(math.Max(hi-lo, hi*0.02), 3)
		lo = math.Floor(lo/step-1e-9) * step
	}
	if p.YMax <= 0 {
		hi = lo + niceMax(hi-lo, 3)
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// lineColor returns a line's colour, taking the next palette colour when
// it has none.
func lineColor(l Line, next *int) string {
	if l.Color != "" {
		return l.Color
	}
	c := Palette[*next%len(Palette)]
	*next++
	return c
}

func drawLine(s *svg, l Line, color string, xs, ys func(float64) float64, base float64, unit string) {
	if len(l.Points) == 0 {
		return
	}
	if l.Style == StylePoints {
		s.open("g", attr{"class", "points"})
		for _, pt := range l.Points {
			s.circle(xs(pt.X), ys(pt.Y), 2.2, color, "dot", fmt.Sprintf("%s: %s %s at %s", l.Name, fmtNum(pt.Y), unit, fmtNum(pt.X)))
		}
		s.close("g")
		return
	}
	var d strings.Builder
	for i, pt := range l.Points {
		x, y := xs(pt.X), ys(pt.Y)
		switch {
		case i == 0:
			fmt.Fprintf(&d, "M%s %s", num(x), num(y))
		case l.Style == StyleLine:
			fmt.Fprintf(&d, "L%s %s", num(x), num(y))
		default:
			fmt.Fprintf(&d, "H%sV%s", num(x), num(y))
		}
	}
	if l.Style == StyleArea {
		area := d.String() + fmt.Sprintf("V%sH%sZ", num(base), num(xs(l.Points[0].X)))
		s.path(area, "none", color, "area")
	}
	s.open("path", attr{"d", d.String()}, attr{"stroke", color}, attr{"fill", "none"}, attr{"class", "series"})
	s.title(l.Name)
	s.close("path")
}
