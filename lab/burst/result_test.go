package burst

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"
	"time"

	goldenfile "github.com/latscope/latscope/internal/golden"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/lab"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// cpuReport returns a report whose CPU is sched scheduler samples (in
// findRunnable) out of n.
func cpuReport(t *testing.T, n, schedN int64) *sched.Report {
	fn := func(id uint64, name string) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: &profile.Function{ID: id, Name: name}}}}
	}
	work, find := fn(1, "main.work"), fn(2, "runtime.findRunnable")
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Period:     5_000_000,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{work}, Value: []int64{n - schedN, (n - schedN) * 5_000_000}},
			{Location: []*profile.Location{find}, Value: []int64{schedN, schedN * 5_000_000}},
		},
	}
	rep, err := sched.FromProfile(p, sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func traceReport(t *testing.T, n, schedN int64, creations int64) *sched.Report {
	rep := cpuReport(t, n, schedN)
	rep.CPU.Source = "trace"
	rep.Trace = &sched.TraceStats{
		Duration: 2 * time.Second, PsSeen: 32, Threads: 30, PStarts: 700, PStops: 700,
		Creations: creations, Wakeups: 100,
		Bursts: sched.BurstStats{Gap: time.Millisecond, MinSize: 16, Count: 20, Large: creations / 20000, InLarge: creations, LargeMedian: 20000},
		Wait:   sched.WaitStats{Count: creations + 100, P50: 3 * time.Millisecond, P99: 20 * time.Millisecond},
	}
	return rep
}

func syntheticResult(t *testing.T) *Result {
	w := func(cpu time.Duration) []Window {
		return []Window{{Wall: 2 * time.Second, CPU: cpu, Run: cpu, Events: 400_000, Timeslices: 3000, Threads: 30}}
	}
	r := &Result{
		Options: DefaultOptions.withDefaults(lab.Short), Profile: lab.Short, NumCPU: 2, Fit: 2, HZ: 100,
		Variants: []*Measurement{
			{Variant: Variant{Name: "spawn", Mode: Spawn, Procs: 32}, GOMAXPROCS: 32, Windows: w(920 * time.Millisecond),
				Profile: cpuReport(t, 300, 138), Trace: traceReport(t, 150, 54, 400_000)},
			{Variant: Variant{Name: "fixed", Mode: Fixed, Procs: 32}, GOMAXPROCS: 32, Workers: 2, Windows: w(390 * time.Millisecond),
				Profile: cpuReport(t, 130, 2), Trace: traceReport(t, 60, 2, 0)},
		},
	}
	for _, m := range r.Variants {
		m.summarise()
	}
	r.Variants[0].Coverage, r.Variants[1].Coverage = 0.95, 0.9
	r.predict()
	return r
}

// TestResultGolden renders a synthetic result: the tables, predictions and
// checks of the report section.
func TestResultGolden(t *testing.T) {
	r := syntheticResult(t)
	var b bytes.Buffer
	b.WriteString(r.markdown())
	b.WriteString("\nchecks:\n")
	for _, c := range r.checks() {
		ok := "FAIL"
		if c.OK {
			ok = "ok"
		}
		b.WriteString("- " + ok + ": " + c.Name + ": want " + c.Want + "; got " + c.Got + "\n")
	}
	golden(t, "result.md", b.Bytes())
	p := r.Predictions[0]
	if p.From != "spawn" || p.To != "fixed" || p.Share != 0.46 || p.PredictedCPU != 2300*(1-0.46) {
		t.Errorf("prediction %+v", p)
	}
}

// TestChecksFail: a fix that saves nothing, and a finding that does not
// fire, fail their checks.
func TestChecksFail(t *testing.T) {
	r := syntheticResult(t)
	r.Variants[1].Windows = r.Variants[0].Windows
	r.Variants[1].summarise()
	r.Variants[0].Trace = traceReport(t, 150, 5, 400_000)
	r.Predictions = nil
	r.predict()
	for _, c := range r.checks() {
		wantFail := c.Name != "fixed: no scheduler-overhead finding on its trace or its profile"
		if c.OK == wantFail {
			t.Errorf("check %q: ok %v (got %s)", c.Name, c.OK, c.Got)
		}
	}
}

// TestChecksInconclusive: a scheduler share whose 95 % interval contains
// the threshold (15 of 150 samples: 10 %) is neither a pass nor a fail.
func TestChecksInconclusive(t *testing.T) {
	r := syntheticResult(t)
	r.Variants[0].Trace = traceReport(t, 150, 15, 400_000)
	c := r.checks()[0]
	if c.Status() != lab.Inconclusive || !c.OK || c.Low == nil || *c.Low >= 10 || *c.High <= 10 {
		t.Errorf("check %q: %s, interval %s; want inconclusive, an interval across 10 %%", c.Name, c.Status(), c.Interval())
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}
