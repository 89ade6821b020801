package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
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
	FitY bool
	// LogY draws the y axis on a log scale, from the decade at or below the
	// smallest positive value to the decade above the largest, for values
	// spread over several orders of magnitude (0.3 ms next to 1 s).
	// Values at or below zero sit on the bottom edge.
	LogY  bool
	Lines []Line
	Marks []Mark // horizontal reference lines
}

// Line is one series of a panel.
type Line struct {
	Name  string
	Color string // "" picks from Palette
	Style Style
	// Points are in x order for lines, steps and areas. A NaN Y leaves a
	// gap: the value is unknown from that x to the next point (a step
	// holds the previous value up to it).
	Points []Point
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
	pw := chartW - left - right
	xs := func(x float64) float64 { return left + pw*(finite(x)-lo)/(hi-lo) }
	labels, rows := tl.bandLabels(xs, lo, hi)
	h := axisH + 6
	if rows > 0 {
		h += 16 + bandRowH*float64(rows-1)
	}
	for _, p := range tl.Panels {
		h += titleH + panelHeight(p) + gap
	}
	s := newSVG(chartW, h, "timeline", tl.Label)
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
	for _, l := range labels {
		s.text(l.x, base+32+bandRowH*float64(l.row), "middle", "band-label", l.text)
	}
	s.text(left+pw/2, h-6, "middle", "axis-title", tl.XLabel)
	return s.html()
}

// bandRowH is the spacing of band label rows under the axis.
const bandRowH = 14.0

// bandLabel is a band's label placed under the axis.
type bandLabel struct {
	x    float64
	row  int
	text string
}

// bandLabels centres each visible band's label under its band, in the
// first row where it overlaps no label placed before it, and returns the
// labels and the number of rows used.
func (tl Timeline) bandLabels(xs func(float64) float64, lo, hi float64) ([]bandLabel, int) {
	var out []bandLabel
	var taken [][][2]float64 // per row: the x extents of its labels
	for _, b := range tl.Bands {
		if b.Label == "" || b.To < lo || b.From > hi {
			continue
		}
		x := (xs(math.Max(b.From, lo)) + xs(math.Min(b.To, hi))) / 2
		half := textWidth(b.Label, 11)/2 + 4
		row := 0
		for ; row < len(taken); row++ {
			free := true
			for _, e := range taken[row] {
				if x-half < e[1] && x+half > e[0] {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if row == len(taken) {
			taken = append(taken, nil)
		}
		taken[row] = append(taken[row], [2]float64{x - half, x + half})
		out = append(out, bandLabel{x, row, b.Label})
	}
	return out, len(taken)
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
	yTicks := ticks(yMin, yMax, 3)
	if p.LogY {
		ys = func(v float64) float64 {
			v = math.Min(math.Max(finite(v), yMin), yMax)
			return top + ph - ph*math.Log10(v/yMin)/math.Log10(yMax/yMin)
		}
		yTicks = logTicks(yMin, yMax)
	}
	s.rect(left, top, pw, ph, "none", "frame", "")
	tl.bands(s, xs, xlo, xhi, top, ph)
	for _, t := range yTicks {
		s.line(left, ys(t), left+pw, ys(t), "grid")
		s.text(left-8, ys(t)+4, "end", "tick", fmtTick(t))
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
// to a nice maximum, or from decade to decade with LogY.
func (p Panel) yRange() (lo, hi float64) {
	if p.LogY {
		return p.logRange()
	}
	lo, hi = math.Inf(1), p.YMax
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			if math.IsNaN(pt.Y) {
				continue
			}
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

// logRange returns a log axis from the decade at or below the smallest
// positive value to the decade above the largest (or YMax).
func (p Panel) logRange() (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	add := func(v float64) {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			add(pt.Y)
		}
	}
	for _, m := range p.Marks {
		add(m.Value)
	}
	if p.YMax > 0 {
		hi = p.YMax
	}
	if math.IsInf(lo, 0) || hi <= 0 {
		return 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)+1e-9))
	if p.YMax <= 0 { // a little room above the largest value: 990 gets an axis to 10000
		hi = math.Pow(10, math.Ceil(math.Log10(hi)+0.05))
	}
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// logTicks returns the decades from lo to hi, with 2× and 5× steps
// between them when the axis spans at most two decades.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	few := hi/lo <= 100*(1+1e-9)
	for d := lo; d <= hi*(1+1e-9) && len(out) < 100; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; (m == 1 || few) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// fmtTick formats an axis tick: fmtNum, with more digits below 0.001.
func fmtTick(v float64) string {
	if a := math.Abs(v); a > 0 && a < 0.001 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return fmtNum(v)
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
			if math.IsNaN(pt.Y) {
				continue
			}
			s.circle(xs(pt.X), ys(pt.Y), 2.2, color, "dot", fmt.Sprintf("%s: %s %s at %s", l.Name, fmtNum(pt.Y), unit, fmtNum(pt.X)))
		}
		s.close("g")
		return
	}
	// One subpath per run of known values; a NaN ends the run (a step
	// holds its value up to the NaN's x).
	var d, area, sub strings.Builder
	open, x0 := false, 0.0
	end := func() {
		if !open {
			return
		}
		d.WriteString(sub.String())
		fmt.Fprintf(&area, "%sV%sH%sZ", sub.String(), num(base), num(x0))
		sub.Reset()
		open = false
	}
	for _, pt := range l.Points {
		x := xs(pt.X)
		if math.IsNaN(pt.Y) {
			if open && l.Style != StyleLine {
				fmt.Fprintf(&sub, "H%s", num(x))
			}
			end()
			continue
		}
		y := ys(pt.Y)
		switch {
		case !open:
			fmt.Fprintf(&sub, "M%s %s", num(x), num(y))
			open, x0 = true, x
		case l.Style == StyleLine:
			fmt.Fprintf(&sub, "L%s %s", num(x), num(y))
		default:
			fmt.Fprintf(&sub, "H%sV%s", num(x), num(y))
		}
	}
	end()
	if d.Len() == 0 {
		return
	}
	if l.Style == StyleArea {
		s.path(area.String(), "none", color, "area")
	}
	s.open("path", attr{"d", d.String()}, attr{"stroke", color}, attr{"fill", "none"}, attr{"class", "series"})
	s.title(l.Name)
	s.close("path")
}
