package jfr_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/churntest"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tier"
)

// churnOf runs the JVM's churn analysis (package sched) over the recording
// at path, reading its events with jfr.ReadEvents: alone (AnalyzeJVM), and
// as a consumer of jfr.Events, the read that feeds the budget too, which
// must agree.
func churnOf(t *testing.T, path string) *sched.JVMReport {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := sched.AnalyzeJVM(context.Background(), path, rec, sched.JVMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := sched.NewJVMChurn(sched.JVMOptions{Recording: rec})
	err = jfr.ReadEvents(context.Background(), path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		c.Event(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Result()
	if a, b := alone.Verdict(), r.Verdict(); a != b {
		t.Errorf("AnalyzeJVM says %q, the consumer beside the budget %q", a, b)
	}
	return r
}

// burn keeps every CPU busy until stop is called: the loaded runs.
func burn() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := uint64(1); ; x = x*6364136223846793005 + 1 {
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// churnAlpha is the level of the test that the fix (the batched pool)
// lowers the pool machinery's share: a one-sided two-proportion z-test over
// both recordings' sample counts (jfrtest.ProportionsZ) must reject "the
// batched share is no lower" at α = 0.01.
const churnAlpha = 0.01

// TestChurnRecordings checks the verdicts on the kept recordings of
// Burst.java (internal/jfr/testdata/rec/burst.jfr and batch.jfr): churn on the
// bursty pool, none once the same work is batched (docs/jfr-churn.md), and
// the fix lowering the share at churnAlpha.
func TestChurnRecordings(t *testing.T) {
	t.Parallel()
	reports := map[string]*sched.JVMReport{}
	for _, name := range []string{"burst", "batch"} {
		tr := keptTruth(t, name)
		r := churnOf(t, keptPath(t, name))
		reports[name] = r
		t.Run(name, func(t *testing.T) {
			t.Logf("%s: %s; Burst's own count: %v events, %v ns CPU per event", name, r.Verdict(), tr.Own["events"], tr.Own["cpu_per_event_ns"])
			checkChurn(t, r, tr.Config["churn"] == true)
			checkRendered(t, r)
		})
	}
	checkFix(t, "batch", reports["burst"], reports["batch"])
}

// TestChurnRecordingsLive records Burst.java in both modes, on a quiet
// machine and with a burner on every CPU, and judges the verdicts as
// TestChurnRecordings does (checkChurn, checkFix).
//
// Chance of a false failure: a share's verdict fails only beyond the
// share's 95 % interval, so at most 2.5 % per run when the true share sits
// exactly at the rule, and next to nothing at the shares measured (bursty
// 8.5–36 %, batched 0–3 %). The fix's test has α = churnAlpha = 1 % of
// passing a fix that lowers nothing; its chance to fail a real fix is 1
// minus its power (jfrtest.ProportionsPower), which depends on the shares
// and counts. A 3 s run gave about 150–250 samples, where the power was
// only 0.50 at 9.5 % against 3 %: the runs last 9 s (about 400 samples
// each), where it is 0.85 at the worst shares measured (8.5 % against 3 %,
// with two burners on a host at load 9), 0.93 at 9.5 % and above 0.999 at
// the bursty pool's usual 20 %; the bursty share has measured as low as
// 6.4 % against the fix's 0.7 % (z = 5.80, power 0.999). Each run logs its
// own. The bursty verdicts are logged, not judged (see below); the
// batched verdicts fail only beyond their interval (2.5 % each at worst,
// next to nothing at the 0–3 % measured); the fix's two tests fail with 1
// minus their power: under 1 % in all at the usual shares, about 1 − 0.85²
// ≈ 28 % at the worst measured. This is the timing tier; the kept
// recordings carry the deterministic test.
func TestChurnRecordingsLive(t *testing.T) {
	tier.Timing(t)
	ctx := context.Background()
	dir := t.TempDir()
	classes, err := churntest.Compile(ctx, dir)
	if errors.Is(err, churntest.ErrNoJDK) {
		t.Skipf("LOUD SKIP: JVM churn tests need a JDK: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	length := 9 * time.Second
	// The bursty pool is not asserted to churn live, quiet or loaded: its
	// share is a property of the host at the time, not of the
	// configuration — 6.4 % (interval 4.6–8.8 %, 516 samples) on a quiet
	// run and 13.6 % on the loaded one just after it, 6.5 % (4.9–8.7 %)
	// loaded in another CI run, 8.5–36 % before. What the configuration
	// does guarantee is checked: the batched pool is not flagged, and the
	// fix lowers the share (checkFix, α = 0.01). The kept recording
	// (TestChurnRecordings) asserts the bursty verdict deterministically.
	tests := []struct {
		name   string
		mode   string
		loaded bool
		churn  bool
		judge  bool // false: the verdict is logged, not asserted
	}{
		{"burst", "burst", false, true, false},
		{"batch", "batch", false, false, true},
		{"burst-loaded", "burst", true, true, false},
		{"batch-loaded", "batch", true, false, true},
	}
	reports := map[string]*sched.JVMReport{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := func() {}
			if tt.loaded {
				stop = burn()
			}
			run, err := churntest.Record(ctx, classes, dir, tt.name, churntest.Options{Mode: tt.mode, Length: length})
			stop()
			if err != nil {
				t.Fatal(err)
			}
			r := churnOf(t, run.Recording)
			t.Logf("%s: %s; CPU %v for %d events, %v per event; idle-worker wakeups %d, large bursts %d",
				tt.name, r.Verdict(), run.CPU, run.Events, run.CPUPerEvent(), r.Parks.IdleWakeups, r.Parks.Large)
			reports[tt.name] = r
			if tt.judge {
				checkChurn(t, r, tt.churn)
			}
			checkRendered(t, r)
		})
	}
	for _, pair := range [][2]string{{"burst", "batch"}, {"burst-loaded", "batch-loaded"}} {
		checkFix(t, pair[1], reports[pair[0]], reports[pair[1]])
	}
}

// checkChurn judges one recording's verdict. The rule is the Go side's
// (docs/method.md §9): a share above 10 % on at least 50 samples. The
// bursty pool's share has measured 9.5–36 % (quiet and with the burners;
// 11.6 % with an interval of 7.3–17.7 % on 147 samples in one quiet run),
// so a verdict taken from the point estimate can fall either side of the
// rule. What the method can assert: the bursty share's 95 % interval
// reaches the rule (flagged, or the rule is within what the samples
// allow), and the batched share's interval reaches below it (not flagged,
// or flagged on a draw the samples allow).
func checkChurn(t *testing.T, r *sched.JVMReport, churn bool) {
	t.Helper()
	if r.Samples < r.Thresholds.MinSamples {
		t.Fatalf("%d execution samples, fewer than %d: churn.jfc samples every 1 ms", r.Samples, r.Thresholds.MinSamples)
	}
	if r.Period != time.Millisecond {
		t.Errorf("sampling period read as %v, want 1ms (churn.jfc)", r.Period)
	}
	flagged := slices.ContainsFunc(r.Findings(), func(f sched.Finding) bool { return f.Kind == sched.FindSchedOverhead })
	rule := r.Thresholds.SchedShare
	switch {
	case flagged == churn:
	case churn && r.High >= rule:
		t.Logf("not flagged, but the rule (%.0f %%) is within the share's 95 %% interval: %s", 100*rule, r.Verdict())
	case !churn && r.Low <= rule:
		t.Logf("flagged, but the rule (%.0f %%) is within the share's 95 %% interval: %s", 100*rule, r.Verdict())
	default:
		t.Errorf("churn flagged: %v, want %v, beyond the share's 95 %% interval (%.1f–%.1f %%): %s", flagged, churn, 100*r.Low, 100*r.High, r.Verdict())
	}
}

// checkFix requires the batched pool's share f below the bursty pool's b
// by a one-sided two-proportion z-test at churnAlpha over both sample
// counts.
func checkFix(t *testing.T, name string, b, f *sched.JVMReport) {
	t.Helper()
	if b == nil || f == nil {
		return
	}
	z, zc := jfrtest.ProportionsZ(b.Machinery, b.Samples, f.Machinery, f.Samples), jfrtest.Z(churnAlpha)
	power := jfrtest.ProportionsPower(b.Share, f.Share, b.Samples, f.Samples, churnAlpha)
	t.Logf("%s: the fix's share %d/%d = %.1f %% against the bursty pool's %d/%d = %.1f %%: z = %.2f (critical %.2f at α = %g; power at these shares %.3f)",
		name, f.Machinery, f.Samples, 100*f.Share, b.Machinery, b.Samples, 100*b.Share, z, zc, churnAlpha, power)
	if z <= zc {
		t.Errorf("%s: the fix's share %.1f %% (%d samples) is not below the bursty pool's %.1f %% (%d samples) at α = %g: z = %.2f ≤ %.2f",
			name, 100*f.Share, f.Samples, 100*b.Share, b.Samples, churnAlpha, z, zc)
	}
}

// checkRendered renders the churn analysis the way `latscope analyze` does
// (pipeline.FromRecording: render.AddChurn after the budget) and checks
// that the report states the verdict, in text and JSON.
func checkRendered(t *testing.T, r *sched.JVMReport) {
	t.Helper()
	res := &budget.Result{Info: budget.TraceInfo{JVM: true, End: 1e9}}
	rep, err := render.Build(res, render.Inputs{File: "burst.jfr", CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	render.AddChurn(rep, r)
	var text, js strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("the report:\n%s", text.String())
	}
	if !strings.Contains(text.String(), r.Verdict()) {
		t.Errorf("the text report does not state the verdict %q:\n%s", r.Verdict(), text.String())
	}
	if !strings.Contains(js.String(), `"kind": "jvm-churn"`) {
		t.Errorf("the JSON report has no churn section:\n%s", js.String())
	}
}
