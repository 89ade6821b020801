package jfr_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/java"
)

// libEvents are the library's event types.
var libEvents = []string{"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait"}

// keptLib returns the kept recording NAME.jfr of a program of testdata
// (internal/jfr/testdata/rec, recorded by `go run ./internal/jfr/internal/mkrecordings`) and
// its truth.
func keptLib(t *testing.T, name string) (string, *jfrtest.Truth) {
	t.Helper()
	tr, err := jfrtest.ReadTruth(name)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := jfrtest.Kept(name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return rec, tr
}

// recordProgram builds the library, compiles testdata/PROG.java against it
// and records a run of it from the JVM's start; it returns the recording
// and the program's output.
func recordProgram(t *testing.T, prog string, args ...string) (string, string) {
	t.Helper()
	tier.Require(t, "recording "+prog+" under JFR")
	javac, err := java.Javac()
	if err != nil {
		t.Skipf("LOUD SKIP: no JDK: %v", err)
	}
	javaCmd, err := exec.LookPath("java")
	if err != nil {
		t.Skipf("LOUD SKIP: no java on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	classes, err := java.Build(ctx, java.BuildOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, javac, "-cp", classes, "-d", classes, filepath.Join("testdata", prog+".java")).CombinedOutput()
	if err != nil {
		t.Fatalf("javac %s.java: %v: %s", prog, err, out)
	}
	rec := filepath.Join(dir, "demo.jfr")
	cmd := append([]string{"-cp", classes, "-XX:StartFlightRecording:settings=profile,filename=" + rec, prog}, args...)
	out, err = exec.CommandContext(ctx, javaCmd, cmd...).CombinedOutput()
	if err != nil {
		t.Fatalf("java %s: %v: %s", prog, err, out)
	}
	return rec, string(out)
}

// TestEdges checks the kept run of testdata/LibEdge.java, which checks the
// library's edges itself, and their events: execute has no wait, invokeAll
// waits for both tasks, a task that throws still has its run and wait.
func TestEdges(t *testing.T) {
	t.Parallel()
	rec, tr := keptLib(t, "edge")
	var lines []string
	for _, l := range tr.Own["output"].([]any) {
		lines = append(lines, l.(string))
	}
	checkEdges(t, rec, strings.Join(lines, "\n"))
}

// TestEdgesLive runs LibEdge live (timing tier) and checks it as TestEdges.
func TestEdgesLive(t *testing.T) {
	tier.Timing(t)
	rec, out := recordProgram(t, "LibEdge")
	checkEdges(t, rec, out)
}

func checkEdges(t *testing.T, rec, out string) {
	passed := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(l, "ok "):
			passed++
		case !strings.HasPrefix(l, "["): // JVM notes start with [
			t.Errorf("LibEdge: %s", l)
		}
	}
	if passed != 6 {
		t.Errorf("%d checks passed, want 6:\n%s", passed, out)
	}
	counts := map[string]int{}
	reqs := 0
	err := jfr.ReadEvents(context.Background(), rec, jfr.PrintOptions{StackDepth: 64, Events: libEvents}, func(ev *jfr.Event) error {
		counts[ev.Type]++
		if ev.Type == "latscope.Request" {
			reqs++
		} else if ev.Req.RequestID != 1 || ev.Req.TaskID <= 0 {
			t.Errorf("%s: request %d, task %d: want request 1 and a task id", ev.Type, ev.Req.RequestID, ev.Req.TaskID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// execute, two of invokeAll, the throwing supplier: 4 tasks; waits:
	// LibEdge's two get calls on invokeAll's futures and the join, and
	// invokeAll's own get on each future not yet done (0 to 2)
	want := map[string]int{"latscope.Request": 1, "latscope.TaskSubmit": 4, "latscope.TaskRun": 4}
	for typ, n := range want {
		if counts[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", counts[typ], typ, n, counts)
		}
	}
	if w := counts["latscope.TaskWait"]; w < 3 || w > 5 {
		t.Errorf("%d latscope.TaskWait events, want 3 to 5", w)
	}
}

// TestRecord checks the events of the kept recording of LibDemo against
// how LibDemo is written: n requests in order with their traceparents, each
// at least 60 ms (the sleeps of its handler), three tasks per request
// carrying the request's id (one nested), each run on an executor thread
// for at least its sleep and waited for on the thread that submitted it.
func TestRecord(t *testing.T) {
	t.Parallel()
	rec, tr := keptLib(t, "lib")
	n, _ := tr.Config["requests"].(float64)
	if n < 1 {
		t.Fatalf("lib.json: requests %v", tr.Config["requests"])
	}
	checkRecord(t, rec, int(n))
}

// TestRecordLive records LibDemo live (timing tier) and checks it as
// TestRecord.
func TestRecordLive(t *testing.T) {
	tier.Timing(t)
	const n = 8
	rec, _ := recordProgram(t, "LibDemo", strconv.Itoa(n))
	checkRecord(t, rec, n)
}

func checkRecord(t *testing.T, rec string, n int) {
	type task struct {
		submit, run, wait *jfr.Event
	}
	var reqs []jfr.Event
	tasks := map[int64]*task{}
	get := func(id int64) *task {
		if tasks[id] == nil {
			tasks[id] = &task{}
		}
		return tasks[id]
	}
	err := jfr.ReadEvents(context.Background(), rec, jfr.PrintOptions{StackDepth: 64, Events: libEvents}, func(ev *jfr.Event) error {
		e := *ev
		switch ev.Type {
		case "latscope.Request":
			reqs = append(reqs, e)
		case "latscope.TaskSubmit":
			get(ev.Req.TaskID).submit = &e
		case "latscope.TaskRun":
			get(ev.Req.TaskID).run = &e
		case "latscope.TaskWait":
			get(ev.Req.TaskID).wait = &e
		}
		return nil
	})
	if errors.Is(err, jfr.ErrNoJDK) {
		t.Skipf("LOUD SKIP: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != n {
		t.Fatalf("%d latscope.Request events, want %d", len(reqs), n)
	}
	byID := map[int64]jfr.Event{}
	for _, r := range reqs {
		if r.Req.Route != "/demo" || r.Req.RequestID <= 0 || r.Duration < 60*time.Millisecond || len(r.Stack) == 0 {
			t.Errorf("request %+v: want route /demo, an id > 0, at least 60 ms and a stack", r.Req)
		}
		// the thread's CPU (ThreadMXBean): a request that mostly sleeps
		// uses some, and never more than its duration; LibDemo's server
		// executor is not wrapped (ServerQueue), so no queueTime
		if !r.Req.HasCPU || r.Req.CPU <= 0 || r.Req.CPU > r.Duration || r.Req.HasQueue {
			t.Errorf("request %d: cpuTime %v (set %v) over %v, queueTime set %v: want a CPU time within the duration and no queue time", r.Req.RequestID, r.Req.CPU, r.Req.HasCPU, r.Duration, r.Req.HasQueue)
		}
		i := r.Req.Traceparent
		if len(i) != 55 {
			t.Errorf("request %d: traceparent %q", r.Req.RequestID, i)
		}
		byID[r.Req.RequestID] = r
	}
	for i := 1; i <= n; i++ {
		want := fmt.Sprintf("00-%032x-00f067aa0ba902b7-01", i)
		found := false
		for _, r := range reqs {
			found = found || r.Req.Traceparent == want
		}
		if !found {
			t.Errorf("no request with traceparent %s", want)
		}
	}
	if len(tasks) != 3*n {
		t.Fatalf("%d tasks, want %d", len(tasks), 3*n)
	}
	perReq := map[int64]int{}
	for id, k := range tasks {
		if k.submit == nil || k.run == nil || k.wait == nil {
			t.Errorf("task %d: submit %v, run %v, wait %v: want all three", id, k.submit != nil, k.run != nil, k.wait != nil)
			continue
		}
		rid := k.submit.Req.RequestID
		r, ok := byID[rid]
		if !ok || k.run.Req.RequestID != rid || k.wait.Req.RequestID != rid {
			t.Errorf("task %d: request ids submit %d run %d wait %d: want one of a recorded request", id, rid, k.run.Req.RequestID, k.wait.Req.RequestID)
			continue
		}
		perReq[rid]++
		if !k.run.Req.HasCPU || k.run.Req.CPU < 0 || k.run.Req.CPU > k.run.Duration {
			t.Errorf("task %d: cpuTime %v (set %v) over %v: want a CPU time within the run", id, k.run.Req.CPU, k.run.Req.HasCPU, k.run.Duration)
		}
		if k.run.Thread.Name != "demo-executor" {
			t.Errorf("task %d ran on %q, want demo-executor", id, k.run.Thread.Name)
		}
		if k.wait.Thread != k.submit.Thread {
			t.Errorf("task %d: submitted on %q, waited for on %q", id, k.submit.Thread.Name, k.wait.Thread.Name)
		}
		if k.run.Start.Before(k.submit.Start) || k.run.Duration < 5*time.Millisecond {
			t.Errorf("task %d: run at %v for %v, submitted at %v: want after, at least 5 ms", id, k.run.Start, k.run.Duration, k.submit.Start)
		}
		// the task completes its future before its run event ends, so the
		// wait may end first; it cannot end before the task's sleep (5 ms
		// at least) ran
		if end := k.run.Start.Add(5 * time.Millisecond); k.wait.Start.Add(k.wait.Duration).Before(end) {
			t.Errorf("task %d: the wait ended at %v, before the run could finish (%v)", id, k.wait.Start.Add(k.wait.Duration), end)
		}
		if k.submit.Thread == r.Thread && (k.submit.Start.Before(r.Start) || k.submit.Start.After(r.Start.Add(r.Duration))) {
			t.Errorf("task %d: submitted at %v outside its request [%v, +%v]", id, k.submit.Start, r.Start, r.Duration)
		}
	}
	for id, c := range perReq {
		if c != 3 {
			t.Errorf("request %d: %d tasks, want 3", id, c)
		}
	}
}

// TestBuildServlet compiles the Servlet filter against the system's
// javax.servlet API jar (timing tier: it runs javac).
func TestBuildServlet(t *testing.T) {
	tier.Busy(t)
	var jars []string
	all, _ := filepath.Glob("/usr/share/java/*servlet-api*.jar")
	for _, j := range all {
		if !strings.Contains(j, "jakarta") { // the filter is javax.servlet's
			jars = append(jars, j)
		}
	}
	if len(jars) == 0 {
		t.Skip("LOUD SKIP: the Servlet filter (java/servlet) is not compiled: no javax.servlet API jar in /usr/share/java (Debian: apt-get install libservlet-api-java)")
	}
	jar := jars[0]
	if _, err := java.Javac(); err != nil {
		t.Skipf("LOUD SKIP: %v", err)
	}
	classes, err := java.Build(context.Background(), java.BuildOptions{Dir: t.TempDir(), ServletJar: jar})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(classes, "io", "latscope", "servlet", "LatscopeFilter.class")); err != nil {
		t.Fatal(err)
	}
}
