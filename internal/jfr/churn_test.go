package jfr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/churntest"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tier"
)

// stack builds a stack, leaf first, from method names.
func stack(methods ...string) []jfr.Frame {
	out := make([]jfr.Frame, len(methods))
	for i, m := range methods {
		out[i] = jfr.Frame{Method: m}
	}
	return out
}

const (
	fjp     = "java.util.concurrent.ForkJoinPool."
	fjq     = "java.util.concurrent.ForkJoinPool$WorkQueue."
	fjRun   = "java.util.concurrent.ForkJoinPool.runWorker"
	fjWRun  = "java.util.concurrent.ForkJoinWorkerThread.run"
	tpeTask = "java.util.concurrent.ThreadPoolExecutor.getTask"
)

// TestChurnClassify decides a table of stacks taken from recordings of
// Burst.java and of thread pools on JDK 17.
func TestChurnClassify(t *testing.T) {
	tests := []struct {
		name  string
		stack []jfr.Frame
		group jfr.ChurnGroup
		frame string
	}{
		{"scan", stack(fjp+"scan", fjRun, fjWRun), jfr.ChurnFJIdle, fjp + "scan"},
		{"work queue poll beneath run", stack(fjq+"tryPoll", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun), jfr.ChurnFJRun, fjq + "topLevelExec"},
		{"work queue slot beneath scan", stack(fjq+"getSlot", fjp+"scan", fjRun, fjWRun), jfr.ChurnFJIdle, fjp + "scan"},
		{"work queue alone", stack(fjq+"getSlot", "App.peek"), jfr.ChurnFJIdle, fjq + "getSlot"},
		{"task adapter", stack("java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", "java.util.concurrent.ForkJoinTask.doExec", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun),
			jfr.ChurnFJRun, "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec"},
		{"the task's own code", stack("Burst.handle", "Burst.lambda$dispatch$1", "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun),
			jfr.ChurnOther, ""},
		{"the task's JDK call", stack("java.util.HashMap.get", "Burst.handle", "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", fjRun), jfr.ChurnOther, ""},
		{"helper beneath submit", stack("java.util.concurrent.ThreadLocalRandom.getProbe", fjp+"submissionQueue", fjp+"externalPush", fjp+"externalSubmit", fjp+"execute", "Burst.dispatch", "Burst.main"),
			jfr.ChurnFJSubmit, fjp + "submissionQueue"},
		{"inlined cast in a push", stack("java.lang.Class.cast", "java.lang.invoke.VarHandleReferences$Array.getAndSet", fjq+"getAndClearSlot", fjq+"growArray", fjq+"lockedPush", fjp+"externalPush", fjp+"execute", "Burst.dispatch"),
			jfr.ChurnFJSubmit, fjq + "growArray"},
		{"signal", stack(fjp+"signalWork", fjp+"execute", "Burst.dispatch"), jfr.ChurnFJSubmit, fjp + "signalWork"},
		{"unpark", stack("jdk.internal.misc.Unsafe.unpark", "java.util.concurrent.locks.LockSupport.unpark", fjp+"signalWork", fjp+"execute", "Burst.dispatch"),
			jfr.ChurnPark, "jdk.internal.misc.Unsafe.unpark"},
		{"join compensates", stack(fjp+"tryCompensate", fjp+"compensatedBlock", "java.util.concurrent.ForkJoinTask.awaitDone", "java.util.concurrent.ForkJoinTask.join", "App.fanIn"),
			jfr.ChurnFJJoin, fjp + "tryCompensate"},
		{"executor queue", stack("java.util.concurrent.LinkedBlockingQueue.poll", tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker", "java.util.concurrent.ThreadPoolExecutor$Worker.run", "java.lang.Thread.run"),
			jfr.ChurnQueue, "java.util.concurrent.LinkedBlockingQueue.poll"},
		{"executor offer (JDK 17, Burst executor)", stack("java.util.concurrent.atomic.AtomicInteger.getAndIncrement", "java.util.concurrent.LinkedBlockingQueue.offer", "java.util.concurrent.ThreadPoolExecutor.execute", "Burst.dispatch", "Burst.main"),
			jfr.ChurnQueue, "java.util.concurrent.LinkedBlockingQueue.offer"},
		{"executor take releases its lock", stack("java.util.concurrent.locks.AbstractQueuedSynchronizer.signalNext", "java.util.concurrent.locks.AbstractQueuedSynchronizer.release", "java.util.concurrent.locks.ReentrantLock.unlock", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker"),
			jfr.ChurnQueue, "java.util.concurrent.locks.AbstractQueuedSynchronizer.signalNext"},
		{"managed block beneath a queue", stack(fjp+"unmanagedBlock", fjp+"managedBlock", "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask),
			jfr.ChurnQueue, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await"},
		{"managed block beneath a join", stack(fjp+"managedBlock", "java.util.concurrent.ForkJoinTask.awaitDone", "java.util.concurrent.ForkJoinTask.join", "App.fanIn"),
			jfr.ChurnFJJoin, "java.util.concurrent.ForkJoinTask.awaitDone"},
		{"executor get task", stack(tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker", "java.lang.Thread.run"), jfr.ChurnExecutor, tpeTask},
		{"synchronous queue spin", stack("java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill", "java.util.concurrent.SynchronousQueue$TransferStack.transfer", "java.util.concurrent.SynchronousQueue.poll", tpeTask),
			jfr.ChurnQueue, "java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill"},
		{"thread start", stack("java.lang.Thread.start0", "java.lang.Thread.start", "java.util.concurrent.ThreadPoolExecutor.addWorker", "java.util.concurrent.ThreadPoolExecutor.execute", "App.submit"),
			jfr.ChurnThreadLife, "java.lang.Thread.start0"},
		{"map in the JDK only", stack("java.util.concurrent.ConcurrentHashMap.get", "App.lookup"), jfr.ChurnOther, ""},
		{"empty", nil, jfr.ChurnOther, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, fr := jfr.DefaultChurnFrames.Classify(tt.stack)
			if g != tt.group || fr != tt.frame {
				t.Errorf("Classify = %v, %q; want %v, %q", g, fr, tt.group, tt.frame)
			}
		})
	}
}

// TestChurnParkCause decides what a park waited in.
func TestChurnParkCause(t *testing.T) {
	park := []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park"}
	tests := []struct {
		name  string
		stack []jfr.Frame
		want  jfr.ChurnGroup
	}{
		{"fork-join worker idle", stack(append(park, fjp+"awaitWork", fjRun, fjWRun)...), jfr.ChurnFJIdle},
		{"executor worker idle", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask, "java.lang.Thread.run")...), jfr.ChurnExecutor},
		{"executor worker idle, JDK 17 (Burst executor)", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode.block", fjp+"unmanagedBlock", fjp+"managedBlock",
			"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask)...), jfr.ChurnExecutor},
		{"a lock", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire", "java.util.concurrent.locks.ReentrantLock.lock", "App.update")...), jfr.ChurnQueue},
		{"the application's own park", stack(append(park[:1:1], "java.util.concurrent.locks.LockSupport.parkNanos", "Burst.main")...), jfr.ChurnOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jfr.DefaultChurnFrames.ParkCause(tt.stack); got != tt.want {
				t.Errorf("ParkCause = %v, want %v", got, tt.want)
			}
		})
	}
}

// churnOf runs the churn analysis over the recording at path, reading its
// events with jfr.ReadEvents as the analyser does: alone (AnalyzeChurn),
// and as a consumer beside the budget's events, which must agree.
func churnOf(t *testing.T, path string) *jfr.ChurnReport {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := jfr.AnalyzeChurn(context.Background(), path, rec, jfr.ChurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := jfr.NewChurn(jfr.ChurnOptions{Recording: rec})
	events := append(slices.Clone(jfr.Events), jfr.ChurnEvents...)
	err = jfr.ReadEvents(context.Background(), path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: events}, func(ev *jfr.Event) error {
		c.Event(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Result()
	if a, b := alone.Verdict(), r.Verdict(); a != b {
		t.Errorf("AnalyzeChurn says %q, the consumer beside the budget %q", a, b)
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
	reports := map[string]*jfr.ChurnReport{}
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
	reports := map[string]*jfr.ChurnReport{}
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
func checkChurn(t *testing.T, r *jfr.ChurnReport, churn bool) {
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
func checkFix(t *testing.T, name string, b, f *jfr.ChurnReport) {
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
// (it travels in the result's warnings) and checks that the report states
// the verdict, in text and JSON.
func checkRendered(t *testing.T, r *jfr.ChurnReport) {
	t.Helper()
	res := &budget.Result{Info: budget.TraceInfo{JVM: true, End: 1e9}, Warnings: []error{r}}
	rep, err := render.Build(res, render.Inputs{File: "burst.jfr", CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
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

// TestChurnVerdicts checks each verdict of the rule and what it tells the
// user to do, on reports of known counts.
func TestChurnVerdicts(t *testing.T) {
	th := sched.DefaultThresholds
	rep := func(samples, machinery int64, period time.Duration) *jfr.ChurnReport {
		r := &jfr.ChurnReport{Samples: samples, Machinery: machinery, Period: period, Thresholds: th, Duration: 3 * time.Second}
		if samples > 0 {
			r.Share = float64(machinery) / float64(samples)
		}
		return r
	}
	tests := []struct {
		name    string
		r       *jfr.ChurnReport
		kind    sched.FindingKind // the finding, or none
		none    bool
		verdict string
		says    []string
	}{
		{"no samples", rep(0, 0, 0), sched.FindNoSamples, false, "scheduler churn not measured", []string{"enable jdk.ExecutionSample"}},
		{"few at 20 ms", rep(30, 12, 20*time.Millisecond), sched.FindFewSamples, false, "scheduler churn not judged: 30 execution samples are too few",
			[]string{"jdk.ExecutionSample#period=1ms", "churn.jfc", "one every 20ms"}},
		{"few at 1 ms", rep(30, 12, time.Millisecond), sched.FindFewSamples, false, "scheduler churn not judged", []string{"record longer, or while the service is busy"}},
		{"churn", rep(200, 50, time.Millisecond), sched.FindSchedOverhead, false, "scheduler churn: pool machinery took 25.0 %", []string{"lower bound", "batching"}},
		{"at the threshold", rep(200, 20, time.Millisecond), 0, true, "no scheduler churn: pool machinery took 10.0 %", nil},
		{"calm", rep(200, 4, time.Millisecond), 0, true, "no scheduler churn: pool machinery took 2.0 %", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := json.Marshal(tt.r)
			if err != nil || !bytes.Contains(js, []byte(`"kind":"jvm-churn"`)) {
				t.Errorf("JSON %s: %v", js, err)
			}
			if v := tt.r.Verdict(); !strings.HasPrefix(v, tt.verdict) {
				t.Errorf("verdict %q, want it to begin %q", v, tt.verdict)
			}
			fs := tt.r.Findings()
			if tt.none {
				if len(fs) != 0 {
					t.Errorf("findings %v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Kind != tt.kind {
				t.Fatalf("findings %v, want one %v", fs, tt.kind)
			}
			for _, s := range tt.says {
				if !strings.Contains(fs[0].Error(), s) {
					t.Errorf("finding does not say %q: %s", s, fs[0].Error())
				}
			}
		})
	}
}

// updateGolden reports whether -update was given (the flag is package
// jfr's own tests').
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestChurnSynthetic feeds a synthetic event stream of known counts and
// checks the aggregation (groups, payers, the interval, parks clustered
// into bursts, the period and threshold from the settings, the JVM's CPU)
// against testdata/churn.golden, text and JSON; -update rewrites it.
func TestChurnSynthetic(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: t0, Duration: 4e9, Types: map[int64]string{7: "jdk.ExecutionSample", 8: "jdk.ThreadPark"}}}}
	c := jfr.NewChurn(jfr.ChurnOptions{Recording: rec})
	feed := func(ev jfr.Event) { c.Event(&ev) }
	feed(jfr.Event{Type: "jdk.ActiveSetting", Start: t0, Setting: jfr.Setting{TypeID: 7, Name: "period", Value: "10 ms"}})
	feed(jfr.Event{Type: "jdk.ActiveSetting", Start: t0, Setting: jfr.Setting{TypeID: 7, Name: "period", Value: "1 ms"}})
	feed(jfr.Event{Type: "jdk.ActiveSetting", Start: t0, Setting: jfr.Setting{TypeID: 8, Name: "threshold", Value: "1 ms"}})
	feed(jfr.Event{Type: "jdk.CPUInformation", Start: t0, HWThreads: 2})
	scan := stack(fjp+"scan", fjRun, fjWRun)
	submit := stack(fjp+"signalWork", fjp+"execute", "Burst.dispatch", "Burst.main")
	work := stack("Burst.handle", "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", fjRun, fjWRun)
	idle := stack("jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park", fjp+"awaitWork", fjRun, fjWRun)
	for i := range 200 {
		at := t0.Add(time.Duration(i) * 15 * time.Millisecond)
		s := work
		switch {
		case i%5 == 0:
			s = scan
		case i%10 == 1:
			s = submit
		}
		feed(jfr.Event{Type: "jdk.ExecutionSample", Start: at, Stack: s})
	}
	for b := range 3 { // three bursts waking 20 idle workers each, 1 s apart
		for w := range 20 {
			end := t0.Add(time.Duration(b)*time.Second + time.Duration(w)*50*time.Microsecond)
			feed(jfr.Event{Type: "jdk.ThreadPark", Start: end.Add(-5 * time.Millisecond), Duration: 5 * time.Millisecond, Stack: idle})
		}
	}
	feed(jfr.Event{Type: "jdk.ThreadPark", Start: t0.Add(time.Second), Duration: 2 * time.Millisecond, Stack: stack("jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos", "Burst.main")})
	feed(jfr.Event{Type: "jdk.ThreadStart", Start: t0})
	feed(jfr.Event{Type: "jdk.NativeMethodSample", Start: t0})
	for i := 1; i <= 3; i++ {
		feed(jfr.Event{Type: "jdk.CPULoad", Start: t0.Add(time.Duration(i) * time.Second), Load: jfr.CPULoad{JVMUser: 0.3, JVMSystem: 0.1}})
	}
	r := c.Result()
	var got bytes.Buffer
	if err := render.WriteChurnText(&got, r); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got.WriteString("\n")
	got.Write(js)
	got.WriteString("\n")
	golden.Check(t, filepath.Join("testdata", "churn.golden"), got.Bytes(), updateGolden())
	if r.Samples != 200 || r.Machinery != 60 || r.Parks.IdleWakeups != 60 || r.Parks.Large != 3 || r.Period != time.Millisecond {
		t.Errorf("samples %d, machinery %d, idle wakeups %d, large bursts %d, period %v; want 200, 60, 60, 3, 1ms",
			r.Samples, r.Machinery, r.Parks.IdleWakeups, r.Parks.Large, r.Period)
	}
}
