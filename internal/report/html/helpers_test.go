package htmlreport

import (
	"math"
	"strings"
	"testing"
)

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 200, 6, []float64{0, 50, 100, 150, 200}},
		{0, 1, 4, []float64{0, 0.25, 0.5, 0.75, 1}},
		{154, 170, 10, []float64{154, 156, 158, 160, 162, 164, 166, 168, 170}},
		{0.3, 0.7, 4, []float64{0.3, 0.4, 0.5, 0.6, 0.7}},
		{0, 0, 5, []float64{0}},
	} {
		got := ticks(tc.lo, tc.hi, tc.n)
		if !equal(got, tc.want) {
			t.Errorf("ticks(%v, %v, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
	if got := ticks(0, math.NaN(), 5); len(got) > 101 {
		t.Errorf("ticks over NaN: %d ticks", len(got))
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		ms    string
		pct   string
		plain string
	}{
		{157.94, "158 ms", "158%", "157.94"},
		{51.4, "51.4 ms", "51%", "51.4"},
		{4.06, "4.06 ms", "4.1%", "4.06"},
		{0.47, "0.47 ms", "0.47%", "0.47"},
		{0.012, "12 µs", "0.01%", "0.012"},
		{0, "0 ms", "0%", "0"},
	} {
		if got := fmtMs(tc.v); got != tc.ms {
			t.Errorf("fmtMs(%v) = %q, want %q", tc.v, got, tc.ms)
		}
		if got := fmtPct(tc.v); got != tc.pct {
			t.Errorf("fmtPct(%v) = %q, want %q", tc.v, got, tc.pct)
		}
		if got := fmtNum(tc.v); got != tc.plain {
			t.Errorf("fmtNum(%v) = %q, want %q", tc.v, got, tc.plain)
		}
	}
}

func TestBinned(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
		bins int
	}{
		{"spread", []float64{150, 151, 152, 155, 160, 168, 190}, 40},
		{"one value", []float64{7, 7, 7}, 40},
		{"with NaN", []float64{1, math.NaN(), 2, math.Inf(1), 3}, 40},
		{"capped", func() []float64 {
			var v []float64
			for i := range 10000 {
				v = append(v, float64(i%997))
			}
			return v
		}(), 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bins := Histogram{Values: tc.vals, Bins: tc.bins}.Binned()
			n, finiteN := 0, 0
			for _, v := range tc.vals {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					finiteN++
				}
			}
			for i, b := range bins {
				n += b.Count
				if b.Hi <= b.Lo || i > 0 && math.Abs(b.Lo-bins[i-1].Hi) > 1e-9 {
					t.Errorf("bin %d = %+v after %+v", i, b, bins[max(i-1, 0)])
				}
			}
			if n != finiteN {
				t.Errorf("bins hold %d values, want %d", n, finiteN)
			}
			if len(bins) > tc.bins+1 {
				t.Errorf("%d bins, want ≤ %d", len(bins), tc.bins+1)
			}
			for _, v := range tc.vals {
				if !math.IsNaN(v) && !math.IsInf(v, 0) && (v < bins[0].Lo || v > bins[len(bins)-1].Hi) {
					t.Errorf("value %v outside [%v, %v]", v, bins[0].Lo, bins[len(bins)-1].Hi)
				}
			}
		})
	}
	if bins := (Histogram{}).Binned(); bins != nil {
		t.Errorf("no values: %v", bins)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Latency budget": "latency-budget", "a: CPU profile vs wall clock": "a-cpu-profile-vs-wall-clock",
		"<x>": "x", "": "section", "—": "section", "DB wait (lab)": "db-wait-lab"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPageDuplicateIDs(t *testing.T) {
	p := &Page{Title: "t"}
	p.Add(Section{Title: "Same"}, Section{Title: "Same"}, Section{ID: "same", Title: "Other"})
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="same"`, `id="same-2"`, `id="same-3"`} {
		if strings.Count(b.String(), id) != 1 {
			t.Errorf("want exactly one %s", id)
		}
	}
}

func TestChartsSurviveBadNumbers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	charts := map[string]string{
		"bars":      string(BarChart{Unit: "ms", Series: []Series{{Name: "a"}}, Rows: []BarRow{{Label: "x", Values: []float64{nan}}, {Label: "y", Values: []float64{inf, 3}}}}.SVG()),
		"histogram": string(Histogram{Values: []float64{nan, inf}}.SVG()),
		"timeline":  string(Timeline{Panels: []Panel{{Lines: []Line{{Points: []Point{{nan, inf}, {1, 2}}}}}}}.SVG()),
		"empty":     string(Timeline{}.SVG()),
		"waterfall": string(Waterfall{}.SVG()),
	}
	for name, out := range charts {
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("%s: bad number in output: %s", name, out)
		}
	}
}

func TestTableEscapes(t *testing.T) {
	h, err := Table{Caption: "<c>", Columns: []Column{{Name: "<n>", Tip: `"q"`}}, Rows: [][]Cell{{{Text: "<t>", Bar: 2, Color: "red;}</style>", Class: "swatch"}}}}.HTML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	for _, bad := range []string{"<c>", "<n>", "<t>", "</style>"} {
		if strings.Contains(s, bad) {
			t.Errorf("table contains %q unescaped: %s", bad, s)
		}
	}
	if !strings.Contains(s, "width: 100.0%") {
		t.Errorf("bar not clamped to 100%%: %s", s)
	}
}

// TestBinnedProperty: every finite value, alone or repeated, and every small
// set of equal or near values lands in a bin that holds it (a single value at
// some round numbers once gave no bins and an index of -1).
func TestBinnedProperty(t *testing.T) {
	var vals []float64
	for _, base := range []float64{0, 0.1, 0.3, 0.7, 1, 1.1, 2.3, 3, 4.35, 7, 10, 12.5, 33.3, 100, 157.02, 1e3, 1e6, 1e-6, 5e-324, 1.7e308, -0.3, -5} {
		for _, d := range []float64{0, 1e-9, 1e-6, 0.01} {
			vals = append(vals, base+d)
		}
	}
	for i := 1; i <= 1000; i++ {
		vals = append(vals, float64(i)/100, float64(i)/1000*3)
	}
	check := func(name string, vs []float64) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: Binned(%v) panicked: %v", name, vs, r)
			}
		}()
		bins := Histogram{Values: vs}.Binned()
		if len(bins) == 0 {
			t.Fatalf("%s: Binned(%v) = no bins", name, vs)
		}
		n := 0
		for _, b := range bins {
			n += b.Count
		}
		if n != len(vs) {
			t.Fatalf("%s: bins of %v hold %d values, want %d", name, vs, n, len(vs))
		}
		for _, v := range vs {
			if v < bins[0].Lo || v > bins[len(bins)-1].Hi {
				t.Fatalf("%s: value %v outside [%v, %v]", name, v, bins[0].Lo, bins[len(bins)-1].Hi)
			}
		}
	}
	for i, v := range vals {
		if i%50 == 0 {
			_ = Histogram{Values: []float64{v}}.SVG() // drawing one value must not panic either
		}
		check("single", []float64{v})
		check("equal", []float64{v, v, v, v})
		check("pair", []float64{v, v + v*1e-12})
	}
}
