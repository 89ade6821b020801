package tracein

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	rtrace "runtime/trace"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/exp/trace"
)

// TestTransitions: on every event of the format test traces (Go 1.11 to
// the current format) and of the corpus of real services' traces, the
// recipes write the record the methods write, and a Converter keeps them
// on.
func TestTransitions(t *testing.T) {
	if !stackOK {
		t.Fatal("stackHead does not match x/exp/trace's Stack: the recipes fall back on Event.Stack (slower); update stackHead")
	}
	paths := append(traceFiles(t, "testdata/formats/*.trace"), traceFiles(t, "../../testdata/corpus/*.trace")...)
	var fast int
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fast += compareTransitions(t, p, data)
	}
	if fast == 0 {
		t.Error("no event had a recipe")
	}
	t.Logf("%d events by recipe", fast)
}

// compareTransitions checks, on every event of the trace data (named
// name), that the recipes write the record the methods write, with every
// recipe on at once and through a Converter, which must keep them on; it
// returns the number of events a recipe decoded.
func compareTransitions(t *testing.T, name string, data []byte) (fast int) {
	t.Helper()
	tr, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var (
		kinds kindCache
		conv  Converter
	)
	methods, eager := bothWays()
	for n := 0; ; n++ {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: event %d: %v", name, n, err)
		}
		if compareEvent(t, name, n, ev, &kinds, &methods, &eager, &conv) {
			fast++
		}
	}
	if eager.off || conv.tc.off {
		t.Errorf("%s: a check turned the recipes off", name)
	}
	return fast
}

// compareEvent compares ev's records by the methods, by the recipes and
// through conv, and reports whether ev's type has a recipe.
func compareEvent(t *testing.T, name string, n int, ev trace.Event, kinds *kindCache, methods, eager *transitions, conv *Converter) bool {
	t.Helper()
	var want, got, via [1]Event
	evs := []trace.Event{ev}
	kw := convert(evs, want[:], kinds, methods)
	kg := convert(evs, got[:], kinds, eager)
	kc, _ := conv.Convert(name, evs, via[:])
	if kw != kg || kw == 1 && want[0] != got[0] {
		t.Fatalf("%s: event %d (%v): recipe gives %d %+v, the methods %d %+v", name, n, ev, kg, got[0], kw, want[0])
	}
	if kw != kc || kw == 1 && want[0] != via[0] {
		t.Fatalf("%s: event %d (%v): Converter gives %d %+v, the methods %d %+v", name, n, ev, kc, via[0], kw, want[0])
	}
	return headOK && recipes[(*eventHead)(unsafe.Pointer(&ev)).typ].kind != 0
}

// TestTransitionsMade: events made by trace.MakeEvent, each with a table
// of its own, in which every reason is string 1: the recipes, eager and
// through a Converter past its checks, write what the methods write, the
// reasons of each event's own table.
func TestTransitionsMade(t *testing.T) {
	var (
		kinds kindCache
		conv  Converter
	)
	methods, eager := bothWays()
	stack := trace.MakeStack([]trace.StackFrame{{PC: 0x1234, Func: "main.f", File: "f.go", Line: 7}})
	gt := func(g trace.GoID, from, to trace.GoState, reason string) trace.StateTransition {
		st := trace.MakeGoStateTransition(g, from, to)
		st.Reason = reason
		return st
	}
	reasons := []string{"chan receive", "sync.Mutex.Lock", "sleep", "preempted", "select"}
	n := 0
	for round := range 3 * checks {
		reason := reasons[round%len(reasons)]
		for _, c := range []struct {
			g  trace.GoID // the event's goroutine
			st trace.StateTransition
		}{
			{1, gt(7, trace.GoRunnable, trace.GoRunning, "")},
			{7, gt(7, trace.GoRunning, trace.GoNotExist, "")},
			{7, gt(7, trace.GoRunning, trace.GoRunnable, reason)},
			{7, gt(7, trace.GoRunning, trace.GoWaiting, reason)},
			{3, gt(7, trace.GoWaiting, trace.GoRunnable, "")},
			{7, gt(7, trace.GoRunning, trace.GoSyscall, "")},
			{7, gt(7, trace.GoSyscall, trace.GoRunning, "")},
			{7, gt(7, trace.GoSyscall, trace.GoRunnable, "")},
			{7, trace.MakeProcStateTransition(4, trace.ProcIdle, trace.ProcRunning)},
			{7, trace.MakeProcStateTransition(2, trace.ProcRunning, trace.ProcIdle)},
		} {
			ev, err := trace.MakeEvent(trace.EventConfig[trace.StateTransition]{
				Time: trace.Time(1000 + n), Kind: trace.EventStateTransition,
				Goroutine: c.g, Proc: 2, Thread: 9, Stack: stack, Details: c.st,
			})
			if err != nil {
				t.Fatalf("%v: %v", c.st, err)
			}
			if !compareEvent(t, "made", n, ev, &kinds, &methods, &eager, &conv) {
				t.Fatalf("event %d (%v): no recipe", n, ev)
			}
			n++
		}
	}
	if eager.off || conv.tc.off {
		t.Errorf("a check turned the recipes off")
	}
}

// TestTransitionsFlightRecorder: TestTransitions on a flight recorder's
// window, which starts mid-stream (in a generation's middle, every
// goroutine and proc first met by its status), recorded here over
// goroutines that hand off, block, sleep, yield and make syscalls.
func TestTransitionsFlightRecorder(t *testing.T) {
	fr := rtrace.NewFlightRecorder(rtrace.FlightRecorderConfig{MinAge: 50 * time.Millisecond, MaxBytes: 1 << 20})
	if err := fr.Start(); err != nil {
		t.Skipf("no flight recorder: %v", err)
	}
	defer fr.Stop()
	work(200 * time.Millisecond)
	var buf bytes.Buffer
	if _, err := fr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	fast := compareTransitions(t, "flight recorder", buf.Bytes())
	if fast == 0 {
		t.Error("no event had a recipe")
	}
	t.Logf("%d bytes, %d events by recipe", buf.Len(), fast)
}

// work runs goroutines that hand off over channels, contend on a mutex,
// sleep, yield and write to a pipe, for about d.
func work(d time.Duration) {
	stop := time.Now().Add(d)
	var mu sync.Mutex
	var wg sync.WaitGroup
	ping, pong := make(chan int), make(chan int)
	r, w, err := os.Pipe()
	if err == nil {
		defer r.Close()
		defer w.Close()
		go io.Copy(io.Discard, r)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				mu.Lock()
				time.Sleep(time.Duration(i) * 100 * time.Microsecond)
				mu.Unlock()
				if w != nil {
					w.Write([]byte("x"))
				}
				runtime.Gosched()
			}
		}()
	}
	for i := 0; time.Now().Before(stop); i++ {
		ping <- i
		<-pong
		if i%64 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	close(ping)
	wg.Wait()
}

// bothWays returns transitions that use the methods for every event, and
// transitions that use every recipe at once, unchecked.
func bothWays() (methods, eager transitions) {
	methods.off = true
	for i := range eager.checked {
		eager.checked[i] = checks
	}
	return methods, eager
}

// traceFiles returns the files pattern matches, failing the test when
// there are none.
func traceFiles(t *testing.T, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s: %v, %d files", pattern, err, len(paths))
	}
	return paths
}
