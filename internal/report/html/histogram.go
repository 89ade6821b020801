package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
)

// Histogram is the distribution of values (e.g. latencies in ms) as
// vertical bars, with reference lines such as p50 and p99.
type Histogram struct {
	Label  string
	Unit   string    // axis title, e.g. "latency, ms"
	Values []float64 // one per observation
	Bins   int       // at most this many bins; 0 means 40
	Marks  []Mark
	Color  string
}

// Bin is one histogram bin [Lo, Hi).
type Bin struct {
	Lo, Hi float64
	Count  int
}

// Binned returns the histogram's bins: a nice width (1, 2, 2.5 or 5 × 10^k)
// giving about 2√n bins, between 10 and Bins, aligned to the width.
func (h Histogram) Binned() []Bin {
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, v := range h.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		n++
	}
	if n == 0 {
		return nil
	}
	limit := h.Bins
	if limit <= 0 {
		limit = 40
	}
	k := min(max(int(math.Ceil(2*math.Sqrt(float64(n)))), 10), limit)
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(hi)*0.1, 1e-3)
	}
	w := niceStep(span, k)
	if w <= 0 || math.IsInf(w, 0) || math.IsNaN(w) || math.IsInf(hi-lo, 0) {
		// Values too far apart to step through: one bin holds them all.
		return []Bin{{Lo: lo, Hi: math.Nextafter(hi, math.Inf(1)), Count: n}}
	}
	// Edges are multiples of w, rounded to w's decimal precision; the
	// first is at or below lo and the last above hi, whatever the
	// floating-point error of k·w (0.1·3 > 0.3).
	edge := func(i float64) float64 { return roundTo(i*w, w) }
	first := math.Floor(lo / w)
	for edge(first) > lo {
		first--
	}
	last := math.Floor(hi/w) + 1
	for edge(last) <= hi {
		last++
	}
	nb := int(last - first)
	bins := make([]Bin, nb)
	for i := range bins {
		bins[i] = Bin{Lo: edge(first + float64(i)), Hi: edge(first + float64(i+1))}
	}
	for _, v := range h.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		i := min(max(int(math.Floor(v/w-first)), 0), nb-1)
		for i > 0 && v < bins[i].Lo {
			i--
		}
		for i < nb-1 && v >= bins[i].Hi {
			i++
		}
		bins[i].Count++
	}
	return bins
}

// roundTo rounds v to the decimal precision of step (three digits past its
// leading one), so that 3 × 0.1 is 0.3 and 1e-9 steps keep their digits.
func roundTo(v, step float64) float64 {
	digits := max(3-int(math.Floor(math.Log10(step))), 0)
	if digits > 340 {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// SVG draws the histogram.
func (h Histogram) SVG() template.HTML {
	const height, top, left, right, bottom = 300.0, 46.0, 60.0, 30.0, 44.0
	s := newSVG(chartW, height, "histogram", h.Label)
	bins := h.Binned()
	if len(bins) == 0 {
		s.text(chartW/2, height/2, "middle", "empty", "no observations")
		return s.html()
	}
	lo, hi := bins[0].Lo, bins[len(bins)-1].Hi
	maxC := 0
	for _, b := range bins {
		maxC = max(maxC, b.Count)
	}
	yMax := math.Max(niceMax(float64(maxC), 4), 1)
	pw, ph := chartW-left-right, height-top-bottom
	xs := func(v float64) float64 { return left + pw*(v-lo)/(hi-lo) }
	ys := func(c float64) float64 { return top + ph - ph*c/yMax }
	for _, t := range ticks(0, yMax, 4) {
		if t != math.Trunc(t) {
			continue
		}
		s.line(left, ys(t), left+pw, ys(t), "grid")
		s.text(left-8, ys(t)+4, "end", "tick", fmtNum(t))
	}
	s.textTip(16, top+ph/2, "middle", "axis-title vertical", "requests", "")
	color := h.Color
	if color == "" {
		color = colorLatency
	}
	for _, b := range bins {
		if b.Count == 0 {
			continue
		}
		x, w := xs(b.Lo), xs(b.Hi)-xs(b.Lo)
		tip := fmt.Sprintf("%s – %s: %d", fmtNum(b.Lo), fmtNum(b.Hi), b.Count)
		s.rect(x+0.5, ys(float64(b.Count)), math.Max(w-1, 1), ys(0)-ys(float64(b.Count)), color, "bar", tip)
	}
	s.line(left, ys(0), left+pw, ys(0), "axis")
	for _, t := range ticks(lo, hi, 10) {
		s.line(xs(t), ys(0), xs(t), ys(0)+4, "axis")
		s.text(xs(t), ys(0)+17, "middle", "tick", fmtNum(t))
	}
	s.text(left+pw/2, height-6, "middle", "axis-title", h.Unit)
	h.marks(s, xs, lo, hi, top, ys(0))
	return s.html()
}

// marks draws the reference lines, staggering labels that would collide.
func (h Histogram) marks(s *svg, xs func(float64) float64, lo, hi, top, base float64) {
	lastEnd := [2]float64{-1e9, -1e9}
	for _, m := range h.Marks {
		if m.Value < lo || m.Value > hi {
			continue
		}
		x := xs(m.Value)
		w := textWidth(m.Label, 12.5) // bold 11 px
		row := 0
		if x-w/2 < lastEnd[0]+8 {
			row = 1
		}
		lastEnd[row] = x + w/2
		y := top - 26 + float64(row)*14
		s.open("line", attr{"x1", num(x)}, attr{"y1", num(y + 3)}, attr{"x2", num(x)}, attr{"y2", num(base)}, attr{"class", "mark"}, attr{"stroke", m.Color})
		s.close("line")
		s.open("text", attr{"x", num(x)}, attr{"y", num(y)}, attr{"text-anchor", "middle"}, attr{"class", "mark-label"}, attr{"fill", m.Color})
		s.b.WriteString(esc(m.Label))
		s.close("text")
	}
}
