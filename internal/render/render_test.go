package render

import (
	"math"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	before := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: 10, Mean: msd(160), P99: msd(170)},
		Predictions: []Prediction{{Spec: "overlap=a,b", Mean: msd(106), P99: msd(116), RPS: 188}, {Spec: "remove=c", Mean: msd(159), RPS: 125}},
		Terms:       []Term{{Frame: "main.a", Kind: "select", Critical: msd(100)}, {Frame: "main.b", Kind: "network", Critical: msd(50)}}}}}
	after := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: 10, Mean: msd(108), P99: msd(120), RPS: 184},
		Terms: []Term{{Frame: "main.a", Kind: "select", Critical: msd(100)}, {Frame: "main.b", Kind: "network", Critical: msd(0)}}}}}
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
	if d := c.Terms[0]; d.Frame != "main.b" || d.Delta.Ms() != -50 {
		t.Errorf("largest term change = %+v, want main.b −50 ms", d)
	}
	var sb strings.Builder
	if err := c.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "MISS by +51.0 ms") {
		t.Errorf("text: %v\n%s", err, sb.String())
	}
	other := &Report{Groups: []Group{{Name: "other"}}}
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

// msd is a Duration of x milliseconds, for hand-made reports.
func msd(x float64) Duration { return Duration(x * 1e6) }
