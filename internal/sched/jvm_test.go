package sched_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
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

// TestJVMClassify decides a table of stacks taken from recordings of
// Burst.java and of thread pools on JDK 17.
func TestJVMClassify(t *testing.T) {
	tests := []struct {
		name  string
		stack []jfr.Frame
		group sched.JVMGroup
		frame string
	}{
		{"scan", stack(fjp+"scan", fjRun, fjWRun), sched.JVMFJIdle, fjp + "scan"},
		{"work queue poll beneath run", stack(fjq+"tryPoll", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun), sched.JVMFJRun, fjq + "topLevelExec"},
		{"work queue slot beneath scan", stack(fjq+"getSlot", fjp+"scan", fjRun, fjWRun), sched.JVMFJIdle, fjp + "scan"},
		{"work queue alone", stack(fjq+"getSlot", "App.peek"), sched.JVMFJIdle, fjq + "getSlot"},
		{"task adapter", stack("java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", "java.util.concurrent.ForkJoinTask.doExec", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun),
			sched.JVMFJRun, "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec"},
		{"the task's own code", stack("Burst.handle", "Burst.lambda$dispatch$1", "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", fjq+"topLevelExec", fjp+"scan", fjRun, fjWRun),
			sched.JVMOther, ""},
		{"the task's JDK call", stack("java.util.HashMap.get", "Burst.handle", "java.util.concurrent.ForkJoinTask$RunnableExecuteAction.exec", fjRun), sched.JVMOther, ""},
		{"helper beneath submit", stack("java.util.concurrent.ThreadLocalRandom.getProbe", fjp+"submissionQueue", fjp+"externalPush", fjp+"externalSubmit", fjp+"execute", "Burst.dispatch", "Burst.main"),
			sched.JVMFJSubmit, fjp + "submissionQueue"},
		{"inlined cast in a push", stack("java.lang.Class.cast", "java.lang.invoke.VarHandleReferences$Array.getAndSet", fjq+"getAndClearSlot", fjq+"growArray", fjq+"lockedPush", fjp+"externalPush", fjp+"execute", "Burst.dispatch"),
			sched.JVMFJSubmit, fjq + "growArray"},
		{"signal", stack(fjp+"signalWork", fjp+"execute", "Burst.dispatch"), sched.JVMFJSubmit, fjp + "signalWork"},
		{"unpark", stack("jdk.internal.misc.Unsafe.unpark", "java.util.concurrent.locks.LockSupport.unpark", fjp+"signalWork", fjp+"execute", "Burst.dispatch"),
			sched.JVMPark, "jdk.internal.misc.Unsafe.unpark"},
		{"join compensates", stack(fjp+"tryCompensate", fjp+"compensatedBlock", "java.util.concurrent.ForkJoinTask.awaitDone", "java.util.concurrent.ForkJoinTask.join", "App.fanIn"),
			sched.JVMFJJoin, fjp + "tryCompensate"},
		{"executor queue", stack("java.util.concurrent.LinkedBlockingQueue.poll", tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker", "java.util.concurrent.ThreadPoolExecutor$Worker.run", "java.lang.Thread.run"),
			sched.JVMQueue, "java.util.concurrent.LinkedBlockingQueue.poll"},
		{"executor offer (JDK 17, Burst executor)", stack("java.util.concurrent.atomic.AtomicInteger.getAndIncrement", "java.util.concurrent.LinkedBlockingQueue.offer", "java.util.concurrent.ThreadPoolExecutor.execute", "Burst.dispatch", "Burst.main"),
			sched.JVMQueue, "java.util.concurrent.LinkedBlockingQueue.offer"},
		{"executor take releases its lock", stack("java.util.concurrent.locks.AbstractQueuedSynchronizer.signalNext", "java.util.concurrent.locks.AbstractQueuedSynchronizer.release", "java.util.concurrent.locks.ReentrantLock.unlock", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker"),
			sched.JVMQueue, "java.util.concurrent.locks.AbstractQueuedSynchronizer.signalNext"},
		{"managed block beneath a queue", stack(fjp+"unmanagedBlock", fjp+"managedBlock", "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask),
			sched.JVMQueue, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await"},
		{"managed block beneath a join", stack(fjp+"managedBlock", "java.util.concurrent.ForkJoinTask.awaitDone", "java.util.concurrent.ForkJoinTask.join", "App.fanIn"),
			sched.JVMFJJoin, "java.util.concurrent.ForkJoinTask.awaitDone"},
		{"executor get task", stack(tpeTask, "java.util.concurrent.ThreadPoolExecutor.runWorker", "java.lang.Thread.run"), sched.JVMExecutor, tpeTask},
		{"synchronous queue spin", stack("java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill", "java.util.concurrent.SynchronousQueue$TransferStack.transfer", "java.util.concurrent.SynchronousQueue.poll", tpeTask),
			sched.JVMQueue, "java.util.concurrent.SynchronousQueue$TransferStack.awaitFulfill"},
		{"thread start", stack("java.lang.Thread.start0", "java.lang.Thread.start", "java.util.concurrent.ThreadPoolExecutor.addWorker", "java.util.concurrent.ThreadPoolExecutor.execute", "App.submit"),
			sched.JVMThreadLife, "java.lang.Thread.start0"},
		{"map in the JDK only", stack("java.util.concurrent.ConcurrentHashMap.get", "App.lookup"), sched.JVMOther, ""},
		{"empty", nil, sched.JVMOther, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, fr := sched.DefaultJVMFrames.Classify(tt.stack)
			if g != tt.group || fr != tt.frame {
				t.Errorf("Classify = %v, %q; want %v, %q", g, fr, tt.group, tt.frame)
			}
		})
	}
}

// TestJVMParkCause decides what a park waited in.
func TestJVMParkCause(t *testing.T) {
	park := []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park"}
	tests := []struct {
		name  string
		stack []jfr.Frame
		want  sched.JVMGroup
	}{
		{"fork-join worker idle", stack(append(park, fjp+"awaitWork", fjRun, fjWRun)...), sched.JVMFJIdle},
		{"executor worker idle", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask, "java.lang.Thread.run")...), sched.JVMExecutor},
		{"executor worker idle, JDK 17 (Burst executor)", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode.block", fjp+"unmanagedBlock", fjp+"managedBlock",
			"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await", "java.util.concurrent.LinkedBlockingQueue.take", tpeTask)...), sched.JVMExecutor},
		{"a lock", stack(append(park, "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire", "java.util.concurrent.locks.ReentrantLock.lock", "App.update")...), sched.JVMQueue},
		{"the application's own park", stack(append(park[:1:1], "java.util.concurrent.locks.LockSupport.parkNanos", "Burst.main")...), sched.JVMOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sched.DefaultJVMFrames.ParkCause(tt.stack); got != tt.want {
				t.Errorf("ParkCause = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestJVMVerdicts checks each verdict of the rule and what it tells the
// user to do, on reports of known counts.
func TestJVMVerdicts(t *testing.T) {
	th := sched.DefaultThresholds
	rep := func(samples, machinery int64, period time.Duration) *sched.JVMReport {
		r := &sched.JVMReport{Samples: samples, Machinery: machinery, Period: period, Thresholds: th, Duration: 3 * time.Second}
		if samples > 0 {
			r.Share = float64(machinery) / float64(samples)
		}
		return r
	}
	tests := []struct {
		name    string
		r       *sched.JVMReport
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

// TestJVMSynthetic feeds a synthetic event stream of known counts and
// checks the aggregation (groups, payers, the interval, parks clustered
// into bursts, the period and threshold from the settings, the JVM's CPU)
// against testdata/jvm-churn.golden, text and JSON; -update rewrites it.
func TestJVMSynthetic(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: t0, Duration: 4e9, Types: map[int64]string{7: "jdk.ExecutionSample", 8: "jdk.ThreadPark"}}}}
	c := sched.NewJVMChurn(sched.JVMOptions{Recording: rec})
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
	golden(t, "jvm-churn.golden", got.Bytes())
	if r.Samples != 200 || r.Machinery != 60 || r.Parks.IdleWakeups != 60 || r.Parks.Large != 3 || r.Period != time.Millisecond {
		t.Errorf("samples %d, machinery %d, idle wakeups %d, large bursts %d, period %v; want 200, 60, 60, 3, 1ms",
			r.Samples, r.Machinery, r.Parks.IdleWakeups, r.Parks.Large, r.Period)
	}
}
