package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"testing"
)

func TestTimelineLogY(t *testing.T) {
	p := Panel{LogY: true, Lines: []Line{{Style: StylePoints, Points: []Point{{0, 0.26}, {1, 1504}, {2, 0}, {3, math.NaN()}}}}}
	lo, hi := p.yRange()
	if lo != 0.1 || hi != 10000 {
		t.Errorf("log range %v–%v, want 0.1–10000 (the decades around 0.26 and 1504; 0 and NaN ignored)", lo, hi)
	}
	if got, want := logTicks(0.1, 10000), []float64{0.1, 1, 10, 100, 1000, 10000}; !equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	if got, want := logTicks(1, 100), []float64{1, 2, 5, 10, 20, 50, 100}; !equal(got, want) {
		t.Errorf("ticks over two decades %v, want %v", got, want)
	}
	if _, hi := (Panel{LogY: true, Lines: []Line{{Points: []Point{{0, 990}}}}}).yRange(); hi != 10000 {
		t.Errorf("990 gets an axis to %v, want 10000 (room above the largest value)", hi)
	}
	if lo, hi := (Panel{LogY: true}).yRange(); lo != 1 || hi != 10 {
		t.Errorf("empty log panel %v–%v, want 1–10", lo, hi)
	}
	svg := string(Timeline{Panels: []Panel{p}}.SVG())
	for _, tick := range []string{">0.1<", ">10000<"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("no tick %s", tick)
		}
	}
	if strings.Count(svg, `class="dot"`) != 3 {
		t.Errorf("want 3 dots (the NaN left out): %s", svg)
	}
}

func TestTimelineNaNGap(t *testing.T) {
	nan := math.NaN()
	pts := []Point{{0, 1}, {1, 2}, {2, nan}, {3, 3}, {4, nan}}
	tl := Timeline{XMin: 0, XMax: 4, Panels: []Panel{{Lines: []Line{{Name: "s", Style: StyleArea, Points: pts}}}}}
	svg := string(tl.SVG())
	for _, class := range []string{`class="area"`, `class="series"`} {
		i := strings.Index(svg, class)
		if i < 0 {
			t.Fatalf("no %s path", class)
		}
		d := svg[strings.LastIndex(svg[:i], `d="`):i]
		if n := strings.Count(d, "M"); n != 2 {
			t.Errorf("%s: %d subpaths in %s, want 2 (a gap at the NaN)", class, n, d)
		}
	}
	if strings.Contains(svg, "NaN") {
		t.Error("NaN in the output")
	}
}

func TestTimelineBandLabelRows(t *testing.T) {
	one := Timeline{XMin: 0, XMax: 4, Bands: []Band{{From: 1, To: 2, Label: "table lock held"}, {From: 3, To: 4, Label: "far away"}}}
	two := Timeline{XMin: 0, XMax: 4, Bands: []Band{{From: 1, To: 2, Label: "table lock held"}, {From: 1.02, To: 2.52, Label: "SIGSTOP 1.50 s"}}}
	xs := func(x float64) float64 { return 70 + 986*x/4 }
	if _, rows := one.bandLabels(xs, 0, 4); rows != 1 {
		t.Errorf("apart: %d label rows, want 1", rows)
	}
	labels, rows := two.bandLabels(xs, 0, 4)
	if rows != 2 || labels[1].row != 1 {
		t.Errorf("overlapping: %d rows, %+v; want the second label on row 1", rows, labels)
	}
	if h1, h2 := svgHeight(t, one.SVG()), svgHeight(t, two.SVG()); h2-h1 != bandRowH {
		t.Errorf("heights %v and %v: want the second row to add %v px", h1, h2, bandRowH)
	}
}

// svgHeight returns the height of an SVG's viewBox.
func svgHeight(t *testing.T, s template.HTML) float64 {
	t.Helper()
	var w, h float64
	i := strings.Index(string(s), `viewBox="`)
	if i < 0 {
		t.Fatal("no viewBox")
	}
	if _, err := fmt.Sscanf(string(s)[i+len(`viewBox="`):], "0 0 %g %g", &w, &h); err != nil {
		t.Fatal(err)
	}
	return h
}
