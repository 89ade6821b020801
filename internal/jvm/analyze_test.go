package jvm

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
)

// printRecording is the recording ../jfr/testdata/print.json was printed from, as
// far as its events need: the window and the type ids of its settings.
var printRecording = &jfr.Recording{Chunks: []jfr.Chunk{{
	Start: time.Date(2026, 12, 2, 16, 55, 8, 573363529, time.UTC), Duration: 4008055317,
	Types: map[int64]string{5: "jdk.ThreadPark", 1337: "jdk.SocketRead"},
}}}

func printEvents(t *testing.T) []jfr.Event {
	t.Helper()
	f, err := os.Open("../jfr/testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := jfr.NewDecoder(f)
	var evs []jfr.Event
	for {
		var ev jfr.Event
		err := d.Next(&ev)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// t0 is the start of the hand-made recordings.
var t0 = time.Date(2026, 12, 2, 14, 9, 40, 123456789, time.UTC)

// stackOf is a stack of methods, leaf first.
func stackOf(methods ...string) []jfr.Frame {
	fs := make([]jfr.Frame, len(methods))
	for i, m := range methods {
		fs[i] = jfr.Frame{Method: m}
	}
	return fs
}

func run(t *testing.T, o Options, rec *jfr.Recording, evs []jfr.Event) *budget.Result {
	t.Helper()
	a, err := New(o, rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		a.Event(&evs[i])
	}
	if err := a.Matched(); err != nil {
		t.Fatal(err)
	}
	return a.Finalize()
}

func ev(typ string, start time.Time, d time.Duration, thread string, stack ...string) jfr.Event {
	var id int64
	for _, c := range thread {
		id = id*131 + int64(c)
	}
	return jfr.Event{Type: typ, Start: start, Duration: d, Thread: jfr.Thread{Name: thread, JavaID: id}, Stack: stackOf(stack...)}
}

func cut(e jfr.Event) jfr.Event {
	e.Truncated = true
	return e
}

// TestAnalyzer checks the accounting on hand-made events.
func TestAnalyzer(t *testing.T) {
	start := t0
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: start, Duration: 10 * time.Second, Types: map[int64]string{1: "jdk.SocketRead", 2: "jdk.ThreadSleep"}}}}
	deep := make([]string, 64)
	for i := range deep {
		deep[i] = "com.acme.Deep.f"
	}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * 1e9)) }
	evs := []jfr.Event{
		{Type: "jdk.JVMInformation", Start: at(0), JVMStart: start.Add(-time.Second)},
		{Type: "jdk.CPUInformation", Start: at(0), HWThreads: 4},
		{Type: "jdk.ActiveSetting", Start: at(0), Setting: jfr.Setting{TypeID: 1, Name: "threshold", Value: "20 ms"}},
		{Type: "jdk.ActiveSetting", Start: at(0), Setting: jfr.Setting{TypeID: 2, Name: "enabled", Value: "false"}},
		{Type: "jdk.ActiveSetting", Start: at(0), Setting: jfr.Setting{TypeID: 99, Name: "threshold", Value: "1 ms"}},
		ev("jdk.SocketRead", at(1), 50*time.Millisecond, "w1", "java.net.Socket$SocketInputStream.read", "com.acme.Api.call", "com.acme.Ctl.handle", "java.lang.Thread.run"),
		ev("jdk.SocketRead", at(2), 60*time.Millisecond, "w2", "java.net.Socket$SocketInputStream.read", "com.acme.Api.call", "com.acme.Ctl.handle", "java.lang.Thread.run"),
		ev("jdk.SocketRead", at(2), 60*time.Millisecond, "w2", "java.net.Socket$SocketInputStream.read", "com.acme.Api.call", "com.acme.Ctl.handle", "java.lang.Thread.run"),
		ev("jdk.SocketRead", at(3), 20*time.Millisecond, "w1", "java.net.Socket$SocketInputStream.read", "org.postgresql.core.PGStream.receive", "com.acme.Repo.find", "com.acme.Ctl.handle"),
		ev("jdk.ThreadSleep", at(4), 3*time.Second, "timer", "java.lang.Thread.sleep", "com.acme.Janitor.run"),
		cut(ev("jdk.ThreadPark", at(5), time.Second, "deep", append([]string{"jdk.internal.misc.Unsafe.park"}, deep...)...)),
		ev("jdk.ExecutionSample", at(6), 0, "w1", "com.acme.Json.encode", "com.acme.Ctl.handle"),
		ev("jdk.ExecutionSample", at(6), 0, "gc", "com.acme.Other.run"),
		{Type: "jdk.CPULoad", Start: at(5), Load: jfr.CPULoad{JVMUser: 0.5, JVMSystem: 0.1, MachineTotal: 0.95}},
		{Type: "jdk.CPULoad", Start: at(10), Load: jfr.CPULoad{JVMUser: 0.2, JVMSystem: 0, MachineTotal: 0.93}},
	}
	o := DefaultOptions
	o.Handler, o.Requests = "Ctl.handle", 2
	res := run(t, o, rec, evs)
	g := res.Groups[0]
	if g.Name != "com.acme.Ctl.handle" || g.Count != 2 || g.CPUSamples != 1 || res.Info.CPUSamples != 2 || res.Info.Procs != 4 || res.Info.Goroutines != 5 {
		t.Errorf("group %q count %d samples %d/%d procs %d threads %d", g.Name, g.Count, g.CPUSamples, res.Info.CPUSamples, res.Info.Procs, res.Info.Goroutines)
	}
	type key struct {
		Frame, Mechanism string
		Kind             frame.Kind
	}
	want := map[key][2]int64{ // wait, requests
		{Frame: "com.acme.Api.call", Mechanism: "java.net.Socket$SocketInputStream.read", Kind: frame.Network}: {170e6, 2},
		{Frame: "com.acme.Repo.find", Mechanism: "org.postgresql.core.PGStream.receive", Kind: frame.Network}:  {20e6, 1},
	}
	for _, ts := range g.Terms {
		tm := res.Terms[ts.Term]
		k := key{tm.Frame, tm.Mechanism, tm.Kind}
		w, ok := want[k]
		if !ok || ts.Wait != w[0] || ts.Critical != w[0] || int64(ts.Requests) != w[1] || ts.Causes[frame.Network] != w[0] {
			t.Errorf("term %s: %+v", tm.Name(), ts)
		}
		delete(want, k)
	}
	for k := range want {
		t.Errorf("no term %+v", k)
	}
	if s, p := res.Outside.ByKind[frame.Sleep], res.Outside.ByKind[frame.Sync]; s != 3e9 || p != 1e9 {
		t.Errorf("outside: sleep %d, sync %d", s, p)
	}
	// 0.6 of 4 threads for 5 s, then 0.2 for 5 s
	if want := int64((0.6*5 + 0.2*5) * 4 * 1e9); res.Info.ProcBusy < want-1e3 || res.Info.ProcBusy > want+1e3 {
		t.Errorf("ProcBusy %d, want %d", res.Info.ProcBusy, want)
	}
	for _, w := range []struct {
		kind budget.FindingKind
		text string
	}{
		{budget.FindInferred, "critical = wait"},
		{budget.FindInferred, "2 requests from --requests"},
		{budget.FindInferred, "16.000 CPU-seconds"},
		{budget.FindUnexplained, "jdk.SocketRead 20 ms"},
		{budget.FindUnexplained, "not recorded at all (disabled): jdk.ThreadSleep"},
		{budget.FindUnexplained, "record with 1 ms thresholds"},
		{budget.FindUnexplained, "1 waits (1000.0 ms in all) outside com.acme.Ctl.handle have stacks the JVM cut"},
		{budget.FindWarmup, "began 1.0 s after the JVM started"},
		{budget.FindHostBusy, "94% busy"},
	} {
		if !hasFinding(res, w.kind, w.text) {
			t.Errorf("no %v finding with %q in %v", w.kind, w.text, res.Warnings)
		}
	}
}

func hasFinding(res *budget.Result, k budget.FindingKind, text string) bool {
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) && f.Kind == k && strings.Contains(f.Text, text) {
			return true
		}
	}
	return false
}

// TestMatchedRefuses: a recording without latscope.Request events needs
// the handler mode's --handler and a count; the refusal comes once the
// events are read (New cannot know whether requests are marked).
func TestMatchedRefuses(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no handler", Options{Requests: 5}, "handler not given"},
		{"no count", Options{Handler: "A.b"}, "no request boundaries"},
		{"empty load", Options{Handler: "A.b", Load: &Requests{}}, "no request boundaries"},
	}
	evs := printEvents(t)
	for _, tt := range tests {
		a, err := New(tt.o, printRecording)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := range evs {
			a.Event(&evs[i])
		}
		if err := a.Matched(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(Options{Handler: "A.b", Requests: -1}, printRecording); err == nil {
		t.Error("New accepted a negative count")
	}
}

func TestMatchedSuggests(t *testing.T) {
	o := DefaultOptions
	o.Handler, o.Requests = "Probe.handel", 1
	a, err := New(o, printRecording)
	if err != nil {
		t.Fatal(err)
	}
	evs := printEvents(t)
	for i := range evs {
		a.Event(&evs[i])
	}
	if err := a.Matched(); err == nil || !strings.Contains(err.Error(), "closest application frames: Probe.handle") {
		t.Errorf("Matched() = %v", err)
	}
}
