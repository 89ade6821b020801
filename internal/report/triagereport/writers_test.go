package triagereport

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/triage"
	"github.com/latscope/latscope/internal/triage/promtest"
)

// runStub runs triage against a stub answering body.
func runStub(t *testing.T, body string, end int64) *triage.Report {
	t.Helper()
	srv := httptest.NewServer(promtest.Stub(body))
	defer srv.Close()
	r, err := triage.Run(context.Background(), triage.Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(end, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// write returns r's text, JSON and HTML.
func write(t *testing.T, r *triage.Report) (text, js, page string) {
	t.Helper()
	var tb, jb, pb strings.Builder
	if err := WriteText(&tb, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jb, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&pb, r); err != nil {
		t.Fatal(err)
	}
	return tb.String(), jb.String(), pb.String()
}

// TestTextEscapesControlCharacters checks that control characters in
// Prometheus's labels and warnings reach the text report escaped, while
// the JSON keeps them as they are (encoding/json escapes them), and so
// does the HTML page (html/template), but for its copy of the text report.
func TestTextEscapesControlCharacters(t *testing.T) {
	srv := httptest.NewServer(promtest.Stub(`{"status":"success","warnings":["store \u001b]0;pwned\u0007 down\r\nverdict: forged"],"data":{"resultType":"matrix","result":[
		{"metric":{"job":"j","instance":"a\u001b[2J"},"values":[[60,"0.01"],[120,"0.09"],[180,"0.01"],[240,"0.01"],[300,"0.01"],[360,"0.01"]]},
		{"metric":{"job":"j","instance":"b\r\nverdict: forged"},"values":[[60,"0.01"],[120,"0.01"],[180,"0.01"],[240,"0.01"],[300,"0.01"],[360,"0.01"]]}]}}`))
	defer srv.Close()
	r, err := triage.Run(context.Background(), triage.Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(360, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var text, js, page strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.ContainsAny(out, "\x1b\r\x07") || strings.Contains(out, "\nverdict: forged") {
		t.Errorf("text report has raw control characters:\n%q", out)
	}
	if !strings.Contains(out, `a\x1b[2J`) || !strings.Contains(out, `b\r\nverdict: forged`) {
		t.Errorf("text report does not name the instances escaped:\n%s", out)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"a\u001b[2J"`) {
		t.Errorf("JSON does not keep the instance name as it is:\n%s", js.String())
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if _, pre, _ := strings.Cut(page.String(), "<pre>"); strings.ContainsAny(pre, "\x1b\r\x07") {
		t.Errorf("HTML page's text report has raw control characters")
	}
}

// TestNonFiniteSamples checks that NaN and ±Inf samples, as Prometheus
// writes them, are "no value" in the writers: "-" or absent in the text,
// null in the JSON (never on a bad step), no bar in the HTML.
func TestNonFiniteSamples(t *testing.T) {
	r := runStub(t, `{"status":"success","data":{"resultType":"matrix","result":[
		{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"],[120,"+Inf"],[180,"0.09"],[240,"-Inf"],[300,"NaN"],[360,"0.01"],[420,"0.01"]]},
		{"metric":{"job":"j","instance":"b"},"values":[[60,"0.01"],[120,"0.01"],[180,"0.01"],[240,"0.01"],[300,"0.01"],[360,"0.01"],[420,"1e308"]]}]}}`, 420)
	text, js, page := write(t, r)
	if strings.Contains(text, "2562047h") || strings.Contains(text, "Inf") || regexp.MustCompile(`\d{20}`).MatchString(text) {
		t.Errorf("text report:\n%s", text)
	}
	var doc struct {
		Instances []struct {
			Name    string
			Bad     []int
			SignalS []*float64 `json:"signal_s"`
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ji := range doc.Instances {
		for _, i := range ji.Bad {
			if ji.SignalS[i] == nil {
				t.Errorf("%s: step %d is bad with a null signal", ji.Name, i)
			}
		}
	}
	if strings.Contains(page, "NaN") || strings.Contains(page, "Inf") {
		t.Errorf("HTML page has a NaN or Inf coordinate")
	}
}

// TestTextBadStepNamesBounded checks that a bad step of many instances
// names the first few in the text, and all of them in the JSON.
func TestTextBadStepNamesBounded(t *testing.T) {
	in := triage.Input{Start: time.Unix(0, 0), Step: time.Minute, Steps: 5}
	for i := range 1000 {
		in.Instances = append(in.Instances, triage.InstanceSeries{Name: fmt.Sprintf("i%03d", i), Signal: []float64{.01, .01, .09, .01, .01}})
	}
	r := triage.Analyze(in, triage.Params{Threshold: 50 * time.Millisecond})
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(text.String()) {
		if strings.Contains(line, "shared ") && strings.Contains(line, "1000 of 1000") && (len(line) > 200 || !strings.HasSuffix(line, "i009, … 990 more\n")) {
			t.Errorf("bad step line (%d bytes): %.300s", len(line), line)
		}
	}
	if len(r.BadSteps) != 1 || len(r.BadSteps[0].Bad) != 1000 {
		t.Errorf("bad steps %d", len(r.BadSteps))
	}
}

// TestJSONCounts checks that the JSON gives the counts of the model as
// they are: the warnings before they were summed up, and rule 5's GC
// steps (elevated, collected, left out).
func TestJSONCounts(t *testing.T) {
	r := &triage.Report{Step: time.Minute, Warnings: []string{"one", "two"}, WarningsTotal: 20001,
		Instances: []triage.InstanceReport{{Name: "b", Bad: []int{0}, Signal: []float64{0.09}, GC: triage.GCEvidence{Elevated: 6, Collected: 11, LeftOut: 5}}}}
	var js strings.Builder
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Warnings      []string
		WarningsTotal int `json:"warnings_total"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil || len(doc.Warnings) != 2 || doc.WarningsTotal != 20001 {
		t.Errorf("JSON: %v, %d warnings, warnings_total %d", err, len(doc.Warnings), doc.WarningsTotal)
	}
	for _, want := range []string{`"elevated": 6,`, `"collected": 11,`, `"left_out": 5,`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("the JSON does not give %s:\n%s", want, js.String())
		}
	}
}

// TestUnknownSaidOnce: a thin route's verdict (the lab's thin phase, issue
// #35), whose outbound calls are too few per step to compare and whose
// requests without DB calls have no series, is unknown on both counts,
// and the text gives each label once: it printed "which dependency:
// which dependency: unknown".
func TestUnknownSaidOnce(t *testing.T) {
	s := synth{instances: 3, steps: 60, bad: func(_, i int) bool { return i >= 10 && i <= 13 }, noNoDB: true}
	in := withOutbound(s.input(), s, "GET /quote", 0.4)
	for k := range in.Instances {
		for i := range in.Instances[k].Outbound[0].Count {
			if s.bad(k, i) {
				in.Instances[k].Outbound[0].Count[i] = 10 // under the 20 a p95 needs
			}
		}
	}
	r := triage.Analyze(in, triage.Params{Threshold: 50 * time.Millisecond, Signal: "request"})
	if r.Dependency.Kind != triage.DepUnknown || r.DBPath.Verdict != "unknown" {
		t.Fatalf("dependency %s, DB path %s: want both unknown", r.Dependency.Kind, r.DBPath.Verdict)
	}
	text, _, _ := write(t, r)
	for _, twice := range []string{"which dependency: which dependency:", "DB path or not: unknown"} {
		if strings.Contains(text, "3. DB path or not (requests without DB calls, db=\"no\"): "+twice) || strings.Contains(text, "   "+twice) {
			t.Errorf("text gives a label twice (%q):\n%s", twice, text)
		}
	}
	if !strings.Contains(text, "   which dependency: unknown (") || !strings.Contains(text, `db="no"): unknown (`) {
		t.Errorf("text:\n%s", text)
	}
}

// TestDependencyThinRoute: a thin route (2 outbound calls a step) whose
// upstream slowed for the whole fleet, judged at the signal's p50 (issue
// #35, lab run 1): the text and the JSON name the percentile.
func TestDependencyThinRoute(t *testing.T) {
	s := synth{instances: 3, steps: 60, bad: func(_, i int) bool { return i >= 20 && i <= 23 }, noDBRises: true}
	in := withOutbound(s.input(), s, "GET /quote", 0.3)
	for k := range in.Instances {
		o := &in.Instances[k].Outbound[0]
		for i := range o.Count {
			o.Count[i] = 2
		}
	}
	in.Quantile = 0.5
	r := triage.Analyze(in, triage.Params{Threshold: 50 * time.Millisecond, Signal: "request"})
	if r.Verdict.Dependency != triage.DepOutbound {
		t.Fatalf("dependency %s (%s): want outbound", r.Verdict.Dependency, r.Dependency.Reason)
	}
	text, js, _ := write(t, r)
	if !strings.Contains(text, "outbound GET /quote: p50 ") || !strings.Contains(js, `"quantile": 0.5,`) {
		t.Errorf("the text or the JSON does not name the p50:\n%s", text)
	}
}

// TestUncomparableNotHost: the only route with outbound calls started 2
// steps before the fault, so it has no baseline (issue #35, lab run 1):
// the text says once that it was not compared, the JSON counts its pairs.
func TestUncomparableNotHost(t *testing.T) {
	s := synth{instances: 3, steps: 20, bad: func(_, i int) bool { return i >= 10 }, noDBRises: true}
	in := withOutbound(s.input(), s, "GET /quote", 0.3)
	for k := range in.Instances {
		o := &in.Instances[k].Outbound[0]
		for i := range 8 {
			o.P[i], o.Count[i] = math.NaN(), 0
		}
	}
	r := triage.Analyze(in, triage.Params{Threshold: 50 * time.Millisecond, Signal: "request"})
	if r.Verdict.Dependency != triage.DepUnknown {
		t.Fatalf("dependency %s (%s): want unknown", r.Verdict.Dependency, r.Dependency.Reason)
	}
	text, js, _ := write(t, r)
	if strings.Count(text, "   not compared: the outbound calls of GET /quote") != 1 || !strings.Contains(js, `"no_baseline": 30`) {
		t.Errorf("the text or the JSON does not say the route was not compared:\n%s", text)
	}
}

// FuzzWriters writes the reports of arbitrary fleets (signal values from
// the fuzzer on 1 to 3 instances, ±Inf laid out as NaN as the fetcher
// does, names from it too): no writer fails or panics, and the text
// prints no raw control character.
func FuzzWriters(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, "a\x1b[2J")
	f.Add([]byte("0123456789abcdef0123456789abcdef"), "b")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		n := len(data) / 8
		if n == 0 || n > 400 {
			return
		}
		in := triage.Input{Start: time.Unix(60, 0), Step: time.Minute, Steps: n}
		for k := range 1 + n%3 {
			s := triage.InstanceSeries{Name: fmt.Sprintf("%s%d", name, k), Signal: make([]float64, n)}
			for i := range n {
				v := math.Float64frombits(uint64(data[8*i]) | uint64(data[8*i+1])<<8 | uint64(data[8*i+2])<<16 | uint64(data[8*i+3])<<24 |
					uint64(data[8*i+4])<<32 | uint64(data[8*i+5])<<40 | uint64(data[8*i+6])<<48 | uint64(data[8*i+7])<<56)
				if math.IsInf(v, 0) {
					v = math.NaN() // as the fetcher lays them on the grid
				}
				s.Signal[(i+k)%n] = v
			}
			s.Host[triage.Stall] = s.Signal
			in.Instances = append(in.Instances, s)
		}
		r := triage.Analyze(in, triage.Params{Threshold: 50 * time.Millisecond})
		text, _, _ := write(t, r)
		if strings.ContainsAny(text, "\x1b\x07\r") {
			t.Fatalf("text with a raw control character: %q", text)
		}
	})
}
