package htmlreport_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/chromiumtest"
	"github.com/latscope/latscope/internal/tier"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/render"
	htmlreport "github.com/latscope/latscope/internal/report/html"
)

var artifacts = flag.String("artifacts", filepath.Join(os.TempDir(), "latscope-html-report"),
	"`DIR` for the reports and screenshots the browser test renders (overwritten each run)")

// probe is what the browser laid out.
type probe = chromiumtest.Layout

func TestReportInChromium(t *testing.T) {
	tier.Busy(t)
	bin := chromiumtest.Bin(t, "the HTML report")
	dir := *artifacts
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  demotrace.Config
	}{
		{"serial", demotrace.Config{Scenario: "serial", CPUProfile: true}},
		{"waitgroup", demotrace.Config{Scenario: "waitgroup", CPUProfile: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, res := analyze(t, tc.cfg, "remove=callUpstream", "overlap=callUpstream,queryDB")
			opts := htmlreport.DefaultOptions
			opts.Sections = labSections(t)
			var buf bytes.Buffer
			if err := htmlreport.Write(&buf, rep, res, opts); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			p := runProbe(t, bin, dir, tc.name, buf.Bytes())
			checkProbe(t, p, rep)
			shot := filepath.Join(dir, tc.name+".png")
			screenshot(t, bin, page, shot)
			t.Logf("report %s, screenshot %s", page, shot)
		})
	}
}

// analyze records a scenario and builds its report.
func analyze(t *testing.T, cfg demotrace.Config, predict ...string) (*render.Report, *budget.Result) {
	t.Helper()
	rec := fixture.Record(t, cfg)
	opts := budget.DefaultOptions
	for _, s := range predict {
		p, err := budget.ParsePrediction(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	res := fixture.Analyze(t, rec.Path, opts)
	rep, err := render.Build(res, render.Inputs{File: cfg.Scenario + ".trace", CPUSeconds: rec.Summary.CPU.Seconds()})
	if err != nil {
		t.Fatal(err)
	}
	return rep, res
}

// checkProbe asserts the charts were laid out with visible marks.
func checkProbe(t *testing.T, p probe, rep *render.Report) {
	t.Helper()
	if len(p.Errors) > 0 {
		t.Errorf("script errors: %q", p.Errors)
	}
	if p.Resources > 0 {
		t.Errorf("the page fetched %d resources, want none", p.Resources)
	}
	n := rep.Groups[0].Requests.Count
	want := []struct {
		label string
		kind  string
		min   int
	}{
		{"latency budget per request", "bar", 2 * 3}, // two terms + running, both bars
		{"latency histogram", "bar", 3},
		{"latency histogram", "mark", 4},
		{"latency by request", "dot", n},
		{"Median request critical path", "seg", 3},
		{"CPU samples vs wall clock by region", "bar", 4},
		{"DB wait by condition", "series", 3},
		{"DB wait by condition", "band", 1},
	}
	for _, w := range want {
		found := false
		for _, c := range p.Charts {
			if c.Label != w.label {
				continue
			}
			found = true
			if c.W < 400 || c.H < 40 {
				t.Errorf("%s: laid out at %.0f×%.0f px", w.label, c.W, c.H)
			}
			if c.N[w.kind] < w.min {
				t.Errorf("%s: %d visible %s elements, want ≥ %d", w.label, c.N[w.kind], w.kind, w.min)
			}
		}
		if !found {
			t.Errorf("no chart %q; charts: %v", w.label, labels(p))
		}
	}
	if rep.Groups[0].Median != nil && rep.Groups[0].Median.Goroutines > 1 {
		for _, c := range p.Charts {
			if c.Label == "Median request critical path" && c.N["hatch"] == 0 {
				t.Errorf("median path runs on %d goroutines but no borrowed segment is drawn", rep.Groups[0].Median.Goroutines)
			}
		}
	}
}

func labels(p probe) []string {
	var out []string
	for _, c := range p.Charts {
		out = append(out, c.Label)
	}
	return out
}

// runProbe loads the page with the probes in headless Chromium and returns
// what they measured; console messages (errors, CSP violations) fail the test.
func runProbe(t *testing.T, bin, dir, name string, page []byte) probe {
	t.Helper()
	return chromiumtest.Measure(t, bin, page, filepath.Join(dir, name+".probe.html"))
}

func screenshot(t *testing.T, bin, page, png string) {
	t.Helper()
	os.Remove(png)
	chromiumtest.Run(t, bin, "--hide-scrollbars", "--window-size=1400,2400", "--screenshot="+png, "file://"+page)
	st, err := os.Stat(png)
	if err != nil || st.Size() < 20_000 {
		t.Fatalf("screenshot %s: %v (size %d)", png, err, sizeOf(st))
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

// labSections are sections of the kind the lab adds, from made-up numbers:
// a modes table and a DB-wait timeline with throttling and PSI tracks.
func labSections(t *testing.T) []htmlreport.Section {
	t.Helper()
	modes := htmlreport.Table{Columns: []htmlreport.Column{{Name: "mode"}, {Name: "predicted mean", Num: true}, {Name: "measured mean", Num: true}, {Name: "error", Num: true}},
		Rows: [][]htmlreport.Cell{
			{{Text: "baseline"}, {Text: "158 ms"}, {Text: "158 ms", Bar: 1}, {Text: "—", Class: "muted"}},
			{{Text: "overlap upstream+db"}, {Text: "106 ms"}, {Text: "108 ms", Bar: 108.0 / 158}, {Text: "+1.9%", Class: "good"}},
		}}
	tbl, err := modes.HTML()
	if err != nil {
		t.Fatal(err)
	}
	var app, db, thr, psi []htmlreport.Point
	for i := range 120 {
		x := float64(i) / 4
		slow := 0.0
		if x >= 10 && x < 20 {
			slow = 30
		}
		app = append(app, htmlreport.Point{X: x, Y: 40 + slow + float64(i%5)})
		db = append(db, htmlreport.Point{X: x, Y: 25 + slow*0.9 + float64(i%3)})
		thr = append(thr, htmlreport.Point{X: x, Y: slow * 8})
		psi = append(psi, htmlreport.Point{X: x, Y: slow * 1.5})
	}
	tl := htmlreport.Timeline{Label: "DB wait by condition", XLabel: "seconds since the run began",
		Bands: []htmlreport.Band{{From: 10, To: 20, Label: "DB CPU quota 20%"}},
		Panels: []htmlreport.Panel{
			{Title: "duration per request", Unit: "ms", Lines: []htmlreport.Line{{Name: "app", Points: app}, {Name: "DB (pg_stat_statements)", Points: db}}},
			{Title: "DB cgroup throttled", Unit: "ms/s", Height: 70, Lines: []htmlreport.Line{{Name: "throttled", Style: htmlreport.StyleArea, Points: thr, Color: "#d0393e"}}},
			{Title: "CPU pressure (PSI some avg10)", Unit: "%", Height: 70, Lines: []htmlreport.Line{{Name: "some", Style: htmlreport.StyleStep, Points: psi}}},
		}}
	return []htmlreport.Section{
		{Title: "Modes (lab)", Intro: "An example of a section the lab adds: a table of modes.", Body: tbl},
		{Title: "DB wait (lab)", Intro: "An example of a lab timeline: app vs DB duration with throttling and PSI tracks.", Body: tl.SVG(),
			Note: fmt.Sprintf("%d points per track, synthetic.", len(app))},
	}
}

// TestReportPages builds the pages TestReportInChromium shows a browser,
// on the same kept recordings, without one: every chart is there, with
// marks, and the page is self-contained.
func TestReportPages(t *testing.T) {
	t.Parallel()
	for _, cfg := range []demotrace.Config{{Scenario: "serial", CPUProfile: true}, {Scenario: "waitgroup", CPUProfile: true}} {
		rep, res := analyze(t, cfg, "remove=callUpstream", "overlap=callUpstream,queryDB")
		opts := htmlreport.DefaultOptions
		opts.Sections = labSections(t)
		var buf bytes.Buffer
		if err := htmlreport.Write(&buf, rep, res, opts); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, label := range []string{"latency budget per request", "latency histogram", "latency by request", "Median request critical path", "CPU samples vs wall clock by region", "DB wait by condition"} {
			if !strings.Contains(page, label) {
				t.Errorf("%s: no chart %q", cfg.Scenario, label)
			}
		}
		if strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
			t.Errorf("%s: the page refers to an outside resource", cfg.Scenario)
		}
	}
}
