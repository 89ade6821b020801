package render

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCompare(t *testing.T) {
	before := &Report{Groups: []GroupJSON{{Name: "request", Requests: RequestsJSON{Count: 10, MeanMs: 160, P99Ms: 170},
		Predictions: []PredictionJSON{{Spec: "overlap=a,b", MeanMs: 106, P99Ms: 116, RPS: 188}, {Spec: "remove=c", MeanMs: 159, RPS: 125}},
		Terms:       []TermJSON{{Frame: "main.a", Kind: "select", CriticalMs: 100}, {Frame: "main.b", Kind: "network", CriticalMs: 50}}}}}
	after := &Report{Groups: []GroupJSON{{Name: "request", Requests: RequestsJSON{Count: 10, MeanMs: 108, P99Ms: 120, RPS: 184},
		Terms: []TermJSON{{Frame: "main.a", Kind: "select", CriticalMs: 100}, {Frame: "main.b", Kind: "network", CriticalMs: 0}}}}}
	fillTyped(before)
	fillTyped(after)
	c, err := Compare(before, after, DefaultMissPct)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Predictions[0]; p.Miss || math.Abs(p.ErrorPct-(-1.852)) > 0.001 {
		t.Errorf("overlap: error %.3f%% miss %v, want -1.852%% and no miss", p.ErrorPct, p.Miss)
	}
	if p := c.Predictions[1]; !p.Miss {
		t.Errorf("remove: error %.1f%%, want a miss", p.ErrorPct)
	}
	if len(c.Misses()) != 1 {
		t.Errorf("Misses() = %d, want 1", len(c.Misses()))
	}
	if d := c.Terms[0]; d.Frame != "main.b" || d.DeltaMs != -50 {
		t.Errorf("largest term change = %+v, want main.b −50 ms", d)
	}
	var sb strings.Builder
	if err := c.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "MISS by +51.0 ms") {
		t.Errorf("text: %v\n%s", err, sb.String())
	}
	other := &Report{Groups: []GroupJSON{{Name: "other"}}}
	if _, err := Compare(before, other, 5); err == nil || !strings.Contains(err.Error(), `"request"`) {
		t.Errorf("different request types: err = %v", err)
	}
}

func TestStddev(t *testing.T) {
	if got := stddev([]int64{2, 4, 4, 4, 5, 5, 7, 9}, 5); math.Abs(got-2.138) > 0.001 {
		t.Errorf("stddev = %v, want 2.138", got)
	}
	if stddev([]int64{5}, 5) != 0 {
		t.Error("stddev of one value is not 0")
	}
}

// fillTyped sets a hand-made report's unrounded values from its printed
// ones, as Build sets both from the analysis.
func fillTyped(r *Report) {
	d := func(ms float64) time.Duration { return time.Duration(ms * 1e6) }
	for i := range r.Groups {
		g := &r.Groups[i]
		g.Requests.mean, g.Requests.p99, g.Requests.rps = d(g.Requests.MeanMs), d(g.Requests.P99Ms), g.Requests.RPS
		g.CPU.critRunning, g.CPU.critRunnable = d(g.CPU.CriticalRunningMs), d(g.CPU.CriticalRunnableMs)
		for j := range g.Predictions {
			p := &g.Predictions[j]
			p.mean, p.p99, p.rps = d(p.MeanMs), d(p.P99Ms), p.RPS
		}
		fillTerms(g.Terms)
	}
}

// fillTerms sets hand-made terms' unrounded critical time.
func fillTerms(ts []TermJSON) {
	for i := range ts {
		ts[i].critical = time.Duration(ts[i].CriticalMs * 1e6)
	}
}
