package dbwait

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/chromiumtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/lab"
)

var htmlArtifacts = flag.String("artifacts", filepath.Join(os.TempDir(), "latscope-dbwait-html"),
	"`DIR` for the report and screenshot TestHTMLInChromium renders (overwritten each run)")

// captureDir holds real captures of one run of each condition (see
// internal/dbwait/testdata: the service's trace with its host samples, and its part
// of the server log), written by TestLab -update.
const captureDir = "../../internal/dbwait/testdata/lab"

// captured builds the scenario's results from the captures, as Run does
// after its windows, without running the lab. The captures predate the
// recording of fault times, so the faults are placed where the scenario's
// timing puts them: the lock from the span of the statement that waited on
// it for the lock's length, the stop from there for PauseHold, the quota
// and the proxy from before the trace to past its end.
func captured(t *testing.T) []*ConditionResult {
	t.Helper()
	var results []*ConditionResult
	for _, c := range Conditions {
		res, samples := joinGz(t, c.Name)
		rr := &RunResult{Run: c.Name + "-1", Trace: c.Name + ".trace", PGLog: c.Name + ".postgresql.json", WindowMs: 3000}
		rr.fill(res, samples)
		if len(samples) < 10 {
			t.Fatalf("%s: %d host samples in the capture, want a track's worth", c.Name, len(samples))
		}
		waiter := longestDB(res)
		at := units.Ms(waiter.Start.Sub(res.TraceStart))
		end := units.Ms(time.Duration(samples[len(samples)-1].Mono) - time.Duration(res.TraceStart))
		switch {
		case c.Fault == LockFault:
			rr.Faults = []FaultSpan{{What: "table lock held", FromMs: at, ToMs: at + units.Ms(LockHold)}}
		case c.Fault == PauseFault:
			rr.Faults = []FaultSpan{{What: "table lock held", FromMs: at, ToMs: at + units.Ms(LockHold)},
				{What: "SIGSTOP 1.50 s", FromMs: at + 2, ToMs: at + 2 + units.Ms(PauseHold)}}
		case c.Quota > 0:
			rr.Faults = []FaultSpan{{What: fmt.Sprintf("CFS quota %g CPU", c.Quota), FromMs: -units.Ms(settle), ToMs: end + 50}}
		case c.Delay > 0:
			rr.Faults = []FaultSpan{{What: fmt.Sprintf("proxy +%v", c.Delay), FromMs: -units.Ms(settle), ToMs: end + 50}}
		}
		cr := &ConditionResult{Name: c.Name, Summary: c.Summary, cond: c, Runs: []*RunResult{rr}}
		cr.aggregate()
		results = append(results, cr)
	}
	return results
}

// joinGz joins one condition's capture the way the scenario does.
func joinGz(t *testing.T, cond string) (*dbwait.Result, []hostsig.Sample) {
	t.Helper()
	res, samples, err := joinCapture(cond+".trace", bytes.NewReader(gunzip(t, cond+".trace.gz")),
		cond+".postgresql.json", bytes.NewReader(gunzip(t, cond+".postgresql.json.gz")), nil, dbwait.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, samples
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(captureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func longestDB(res *dbwait.Result) dbwait.Query {
	var q dbwait.Query
	for _, x := range res.Queries {
		if x.DB > q.DB {
			q = x
		}
	}
	return q
}

// htmlPage builds the lab's outcome from the captures.
func htmlPage(t *testing.T) ([]*ConditionResult, *lab.Outcome) {
	t.Helper()
	results := captured(t)
	out, err := outcome(&lab.Env{Out: t.TempDir(), Profile: lab.Short}, results)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.HTML) == 0 {
		t.Fatal("no HTML report")
	}
	return results, out
}

var svgRe = regexp.MustCompile(`(?s)<svg [^>]*aria-label="([^"]*)">.*?</svg>`)

// charts returns the page's SVG charts by accessible name.
func charts(page []byte) map[string]string {
	out := map[string]string{}
	for _, m := range svgRe.FindAllSubmatch(page, -1) {
		out[html.UnescapeString(string(m[1]))] = string(m[0])
	}
	return out
}

func timelineLabel(rr *RunResult) string {
	return rr.Run + ": app vs DB duration, throttling and CPU pressure"
}

// tip3 formats a value as the timeline's tooltips do.
func tip3(v float64) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
}

// TestHTMLFromCaptures builds the report from real captures and checks
// that each condition has its section with a timeline whose every dot,
// track, band and number comes from the run.
func TestHTMLFromCaptures(t *testing.T) {
	results, out := htmlPage(t)
	page := string(out.HTML)
	svgs := charts(out.HTML)
	for _, c := range results {
		if !strings.Contains(page, fmt.Sprintf(`<section id="%s">`, c.Name)) {
			t.Errorf("%s: no section", c.Name)
		}
		for _, want := range []string{fmt.Sprintf("%.3f", c.DiffP50Ms), fmt.Sprintf("%.3f", c.DBP50Ms), esc(c.Summary)} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q (the Markdown table's number)", c.Name, want)
			}
		}
		rr := c.Runs[0]
		svg, ok := svgs[timelineLabel(rr)]
		if !ok {
			t.Errorf("%s: no timeline %q", c.Name, timelineLabel(rr))
			continue
		}
		n := len(rr.res.Queries)
		if got := strings.Count(svg, `class="dot"`); got != 3*n {
			t.Errorf("%s: %d dots, want 3 per statement (app, DB, difference) = %d", c.Name, got, 3*n)
		}
		// The slowest statement's numbers, as the tooltips print them.
		q := rr.res.Queries[0]
		for _, x := range rr.res.Queries {
			if x.App > q.App {
				q = x
			}
		}
		for _, want := range []string{
			fmt.Sprintf("app · %s: %s ms", q.Verdict, tip3(float64(q.App)/1e6)),
			fmt.Sprintf("DB: %s ms", tip3(float64(q.DB)/1e6)),
			fmt.Sprintf("%s: %s ms", q.Verdict, tip3(float64(q.Outside)/1e6)),
		} {
			if !strings.Contains(svg, esc(want)) {
				t.Errorf("%s: no dot %q", c.Name, want)
			}
		}
		for what, want := range map[string]string{
			"threshold mark":    `class="mark"`,
			"throttling area":   `class="area"`,
			"throttled track":   "<title>throttled time</title>",
			"cgroup PSI track":  "<title>cgroup PSI some</title>",
			"machine PSI track": "<title>machine PSI some</title>",
			"steal track":       "<title>steal</title>",
			"nr_throttled":      fmt.Sprintf("nr_throttled +%d", rr.NrThrottled),
			"log-scale y axis":  "log scale",
			"DB series":         "<title>DB: ",
		} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s: timeline lacks the %s (%q)", c.Name, what, want)
			}
		}
		for _, f := range rr.Faults {
			if !strings.Contains(svg, `class="band"><title>`+esc(f.What)+"</title>") {
				t.Errorf("%s: no band %q", c.Name, f.What)
			}
		}
		// Long statements (the lock's waiter, the paused one) are drawn as
		// spans too: the app's on the trace clock, the DB's placed by the
		// clocks; the proxy's 30 ms ones are not.
		long := c.cond.Fault == LockFault || c.cond.Fault == PauseFault
		for _, span := range []string{"<title>app: start → end</title>", "<title>DB: start → end</title>"} {
			if strings.Contains(svg, span) != long {
				t.Errorf("%s: span line %s drawn: %v, want %v", c.Name, span, !long, long)
			}
		}
		for v, k := range c.Verdicts {
			if k > 0 && !strings.Contains(svg, "app · "+v) {
				t.Errorf("%s: %d statements %s but no such series", c.Name, k, v)
			}
		}
	}
	if got := strings.Count(page, `<td class="good">pass</td>`) + strings.Count(page, `<td class="bad">FAIL</td>`); got != len(out.Checks) {
		t.Errorf("checks table: %d rows with a result, want %d", got, len(out.Checks))
	}
	if strings.Contains(page, "NaN") || strings.Contains(page, "Inf") {
		t.Error("a bad number reached the page")
	}
}

// TestHTMLWithoutSamples: a run without host samples says so instead of
// drawing empty tracks.
func TestHTMLWithoutSamples(t *testing.T) {
	res, _ := joinGz(t, "baseline")
	rr := &RunResult{Run: "nosamples-1"}
	rr.fill(res, nil)
	svg, notes := runTimeline(rr)
	if strings.Contains(string(svg), "throttled time") || strings.Contains(string(svg), "PSI") {
		t.Errorf("tracks drawn without samples")
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "No throttling or pressure tracks: the trace carries 0 host sample(s)") {
		t.Errorf("notes %q do not say that the samples are missing", notes)
	}
	if got, want := strings.Count(string(svg), `class="dot"`), 3*len(res.Queries); got != want {
		t.Errorf("%d dots, want %d", got, want)
	}
}

// TestHTMLInChromium opens the report built from the captures in headless
// Chromium: no script error, no console message (a CSP violation is one),
// nothing fetched, and every run's timeline laid out with all its dots,
// tracks, bands and the threshold visible. It leaves the report and a
// screenshot in -artifacts.
func TestHTMLInChromium(t *testing.T) {
	tier.Busy(t)
	bin := chromiumtest.Bin(t, "the dbwait lab's HTML report")
	results, out := htmlPage(t)
	dir := *htmlArtifacts
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, out.HTML, 0o644); err != nil {
		t.Fatal(err)
	}
	p := chromiumtest.Measure(t, bin, out.HTML, filepath.Join(dir, "report.probe.html"), "--window-size=1300,5200")
	if len(p.Errors) > 0 {
		t.Errorf("script errors: %q", p.Errors)
	}
	if p.Resources > 0 {
		t.Errorf("the page fetched %d resources, want none", p.Resources)
	}
	for _, c := range results {
		rr := c.Runs[0]
		found := false
		for _, ch := range p.Charts {
			if ch.Label != timelineLabel(rr) {
				continue
			}
			found = true
			if ch.Section != c.Name {
				t.Errorf("%s: timeline in section %q", c.Name, ch.Section)
			}
			if ch.W < 900 || ch.H < 400 {
				t.Errorf("%s: timeline laid out at %.0f×%.0f px", c.Name, ch.W, ch.H)
			}
			if n := 3 * len(rr.res.Queries); ch.N["dot"] != n {
				t.Errorf("%s: %d visible dots, want %d", c.Name, ch.N["dot"], n)
			}
			// throttled time, cgroup PSI, machine PSI, steal.
			if ch.N["series"] < 4 || ch.N["area"] < 1 || ch.N["mark"] < 1 {
				t.Errorf("%s: %d series, %d areas, %d marks visible; want 4, 1, 1", c.Name, ch.N["series"], ch.N["area"], ch.N["mark"])
			}
			if len(rr.Faults) > 0 && ch.N["band"] < len(rr.Faults) {
				t.Errorf("%s: %d visible bands for %d faults", c.Name, ch.N["band"], len(rr.Faults))
			}
			t.Logf("%s: %.0f×%.0f px, %v", c.Name, ch.W, ch.H, ch.N)
		}
		if !found {
			t.Errorf("%s: no timeline in the browser", c.Name)
		}
	}
	shot := filepath.Join(dir, "report.png")
	os.Remove(shot)
	chromiumtest.Run(t, bin, "--hide-scrollbars", "--window-size=1300,5200", "--screenshot="+shot, "file://"+page)
	if st, err := os.Stat(shot); err != nil || st.Size() < 50_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("report %s, screenshot %s", page, shot)
}
