package seed

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/lab"
)

// kept demo-service traces (internal/fixture): the seed's service in its
// serial and concurrent (waitgroup) modes, 400 requests each.
const (
	serialTrace     = "../../internal/fixture/testdata/serial-0e8b1c45"
	concurrentTrace = "../../internal/fixture/testdata/waitgroup-da2c157d"
)

// keptRun analyses a kept trace as the lab analyses a window of mode.
func keptRun(t *testing.T, mode, base string) *ModeRun {
	t.Helper()
	var truth struct {
		CPU int64 `json:"cpu_ns"`
	}
	b, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	w := &lab.Window{Trace: base + ".trace", CPU: time.Duration(truth.CPU)}
	rep, ser, err := analyse(context.Background(), w, mode, 4)
	if err != nil {
		t.Fatal(err)
	}
	if ser == nil || len(ser.lat) != rep.Groups[0].Requests.Count {
		t.Fatalf("%s: the per-request series do not line up with the report's %d requests", mode, rep.Groups[0].Requests.Count)
	}
	return &ModeRun{Mode: mode, Report: rep, series: ser, Load: LoadSummary{RPS: rep.Groups[0].Requests.RPS}}
}

// TestChecksOnKeptTraces builds the seed's outcome from kept traces of the
// demo service (fast tier: no server) and checks the intervals: each
// estimate's interval holds its figure, the critical path tiles every
// request (an interval of zero width at 100 %), serial waits are the
// critical-path waits (the stand-in's scale is 1), the predicted
// latencies average to the simulation's mean, and every check carries a
// verdict.
func TestChecksOnKeptTraces(t *testing.T) {
	t.Parallel()
	runs := []*ModeRun{keptRun(t, "serial", serialTrace), keptRun(t, "concurrent", concurrentTrace), keptRun(t, "fixed", concurrentTrace)}
	env := &lab.Env{Profile: lab.Short}
	o, err := outcome(env, runs, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := o.JSON.(*Result)
	for _, c := range o.Checks {
		t.Logf("%s: %s (%s) against %s: %s", c.Name, c.Got, c.Interval(), c.Want, c.Status())
		if c.Verdict == "" {
			t.Errorf("%s: no verdict", c.Name)
		}
		if c.Method == "" {
			continue // exact
		}
		if c.Low == nil {
			t.Errorf("%s: no interval from 400 requests", c.Name)
			continue
		}
		var got float64
		json.Unmarshal([]byte(c.Got), &got)
		if *c.Low > got+0.05 || *c.High < got-0.05 || *c.High < *c.Low {
			t.Errorf("%s: %s outside its interval %s", c.Name, c.Got, c.Interval())
		}
		if strings.Contains(c.Name, "critical path / mean") && (*c.Low != *c.High || math.Abs(*c.Low-100) > 0.01) {
			t.Errorf("%s: interval %s, want 100 exactly (the path tiles each request)", c.Name, c.Interval())
		}
	}
	s := runs[0]
	g := group(s)
	if r := 100 * stats.RatioOfMeans(s.series.critWait, s.series.lat).Value; math.Abs(r-g.Coverage.WaitSumPct) > 0.5 {
		t.Errorf("serial: critical-path waits %.2f %% of the mean, the wait sum %.2f %%: one goroutine per request, they should agree", r, g.Coverage.WaitSumPct)
	}
	for _, p := range g.Predictions {
		xs := s.series.predictedPer(p)
		if xs == nil {
			t.Fatalf("%s: no per-request predictions", p.Spec)
		}
		var sum float64
		for _, x := range xs {
			sum += x
		}
		if m := sum / float64(len(xs)) / 1e6; math.Abs(m-p.SimulatedMean.Ms()) > 0.01 {
			t.Errorf("%s: per-request predictions average %.3f ms, the simulation %.3f ms", p.Spec, m, p.SimulatedMean.Ms())
		}
	}
	if len(res.Predictions) != 3 {
		t.Fatalf("%d predictions, want 3", len(res.Predictions))
	}
	for _, p := range res.Predictions {
		t.Logf("%s (%s → %s): error %.1f%s, predicted gain %.1f%s, measured gain %.1f%s", p.Spec, p.From, p.Against,
			p.ErrorPct, lab.Bracket(p.ErrorInterval), p.PredictedGain, lab.Bracket(p.PredictedGainInterval), p.MeasuredGain, lab.Bracket(p.MeasuredGainInterval))
		in := func(what string, v float64, r *lab.Range) {
			if r == nil || r.Low > v+1e-9 || r.High < v-1e-9 {
				t.Errorf("%s %s: %.3f outside %v", p.Spec, what, v, r)
			}
		}
		in("predicted gain", p.PredictedGain, p.PredictedGainInterval)
		in("measured gain", p.MeasuredGain, p.MeasuredGainInterval)
		if p.Against != "fixed vs concurrent" {
			in("error", p.ErrorPct, p.ErrorInterval)
		} else if p.ErrorInterval != nil {
			t.Errorf("%s: an error interval for a prediction with no error", p.Spec)
		}
	}
	md := o.Report("seed", "/tmp/x", time.Second, time.Unix(0, 0), 0)
	for _, want := range []string{"## Checks (", "95 % interval", "| serial waits sum / mean (%) | 90–102 |", "| concurrent critical path / mean (%) | 98–102 | 100.0 | 100.0–100.0 | pass |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(string(o.HTML), "95 % interval") {
		t.Error("HTML report lacks the intervals")
	}
}
