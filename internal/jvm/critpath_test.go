package jvm

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
)

// TestRequestTimelines checks request mode's timelines and critical path
// on hand-made events whose answer follows from the method: a request on
// w1 sleeps 10 ms, hands a task to e1 (queued 5 ms, then a 40 ms socket
// read) and waits for it; the park inside its task wait is the task wait,
// and the task's read is on the critical path only from the moment w1
// began to wait.
func TestRequestTimelines(t *testing.T) {
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: t0, Duration: 10 * time.Second}}}
	ms := func(x float64) time.Duration { return time.Duration(x * 1e6) }
	at := func(x float64) time.Time { return t0.Add(time.Second + ms(x)) }
	with := func(e jfr.Event, route string, rid, task int64) jfr.Event {
		e.Req = jfr.ReqInfo{Route: route, RequestID: rid, TaskID: task}
		return e
	}
	evs := []jfr.Event{
		ev("jdk.ThreadSleep", at(10), ms(10), "w1", "java.lang.Thread.sleep", "com.acme.Ctl.handle"),
		with(ev("latscope.TaskSubmit", at(20), 0, "w1", "io.latscope.Tasks.submitted", "com.acme.Ctl.handle"), "", 1, 7),
		ev("jdk.SocketRead", at(30), ms(40), "e1", "java.net.Socket$SocketInputStream.read", "com.acme.Up.call", "com.acme.Ctl.lambda$handle$0"),
		with(ev("latscope.TaskRun", at(25), ms(55), "e1", "io.latscope.Tasks$Task.run"), "", 1, 7),
		ev("jdk.ThreadPark", at(30), ms(52), "w1", "jdk.internal.misc.Unsafe.park", "java.util.concurrent.FutureTask.get", "io.latscope.Tasks$Task.get", "io.latscope.Tasks.await", "com.acme.Ctl.handle"),
		with(ev("latscope.TaskWait", at(30), ms(52), "w1", "io.latscope.Tasks.waited", "io.latscope.Tasks$Task.get", "io.latscope.Tasks.await", "com.acme.Ctl.handle"), "", 1, 7),
		// a wait for a task the recording has no run of: a plain wait
		with(ev("latscope.TaskWait", at(85), ms(5), "w1", "io.latscope.Tasks.waited", "io.latscope.Tasks$Task.get", "com.acme.Ctl.handle"), "", 1, 99),
		with(ev("latscope.Request", at(0), ms(100), "w1", "io.latscope.Request.end", "com.acme.Ctl.serve"), "/ctl", 1, 0),
		// begun inside request 1 on its thread (a second filter): part of it
		with(ev("latscope.Request", at(5), ms(90), "w1", "io.latscope.Request.end", "com.acme.Ctl.serve"), "/inner", 3, 0),
		// began before the recording: excluded
		with(ev("latscope.Request", t0.Add(-ms(5)), ms(20), "w2", "io.latscope.Request.end", "com.acme.Ctl.serve"), "/ctl", 2, 0),
		// begun while no recording ran: JFR commits it with duration 0; excluded too
		with(ev("latscope.Request", at(3), 0, "w3", "io.latscope.Request.end", "com.acme.Ctl.serve"), "/ctl", 4, 0),
		// outside any request
		ev("jdk.ThreadPark", at(200), ms(30), "e1", "jdk.internal.misc.Unsafe.park", "java.util.concurrent.LinkedBlockingQueue.take", "java.util.concurrent.ThreadPoolExecutor.getTask"),
	}
	res := run(t, DefaultOptions, rec, evs)
	if len(res.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(res.Groups))
	}
	g := res.Groups[0]
	if g.Name != "/ctl" || g.Count != 1 || g.ExcludedBefore != 2 || g.PathMismatch != 0 || g.Latency.Mean != 100e6 {
		t.Errorf("group %s: count %d, excluded before %d, mismatched paths %d, mean %v: want /ctl, 1, 2, 0, 100 ms", g.Name, g.Count, g.ExcludedBefore, g.PathMismatch, g.Latency.Mean)
	}
	type want struct{ wait, crit int64 }
	wants := map[string]want{
		"com.acme.Ctl.handle|java.lang.Thread.sleep":              {10e6, 10e6},
		"com.acme.Up.call|java.net.Socket$SocketInputStream.read": {40e6, 40e6},
		"com.acme.Ctl.handle|io.latscope.Tasks.await":             {52e6, 2e6}, // the wake-up after the run ended
		"com.acme.Ctl.handle|" + QueueMechanism:                   {5e6, 0},
		"com.acme.Ctl.handle|io.latscope.Tasks$Task.get":          {5e6, 5e6},
	}
	got := map[string]want{}
	for _, ts := range g.Terms {
		tm := res.Terms[ts.Term]
		got[tm.Frame+"|"+tm.Mechanism] = want{ts.Wait, ts.Critical}
		if tm.Kind == frame.Sync && tm.Mechanism == "java.util.concurrent.FutureTask.get" {
			t.Errorf("the park inside the task wait is a term of its own: %+v", ts)
		}
	}
	for k, w := range wants {
		if got[k] != w {
			t.Errorf("%s: wait/critical %v, want %v", k, got[k], w)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("terms %v, want %v", got, wants)
	}
	// 100 ms = 10 sleep + 40 read + 2 wake-up + 5 unmarked task wait + 43 in no recorded wait
	if g.Unknown != 43e6 {
		t.Errorf("unknown %v, want 43 ms", time.Duration(g.Unknown))
	}
	if res.Outside.ByKind[frame.Sync] != 30e6 {
		t.Errorf("outside sync %v, want the idle worker's 30 ms", time.Duration(res.Outside.ByKind[frame.Sync]))
	}
	if !hasFinding(res, budget.FindInferred, "request mode: 1 requests (/ctl)") || !hasFinding(res, budget.FindInferred, "1 latscope.Request events began inside another request") {
		t.Errorf("no request-mode finding: %v", res.Warnings)
	}
	// the sleep comes before the hand-off: removing it saves all of it
	for _, ts := range g.Terms {
		if tm := res.Terms[ts.Term]; tm.Kind == frame.Sleep && ts.Fix != 10e6 {
			t.Errorf("sleep fix %v, want 10 ms", time.Duration(ts.Fix))
		}
	}
}
