package jvm_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/jvm"
	"github.com/latscope/latscope/internal/loadgen"
)

// probeRec is a recording of Probe and Probe's own results.
type probeRec = jfrtest.ProbeRec

// recs unpacks the kept recordings and records Probe live at most once
// for this test binary.
var recs jfrtest.Cache

func TestMain(m *testing.M) {
	code := m.Run()
	recs.Remove()
	os.Exit(code)
}

// keptPath returns the path of the kept recording NAME.jfr
// (internal/jfr/testdata/rec), unpacked once if it is kept gzipped.
func keptPath(t testing.TB, name string) string {
	t.Helper()
	return recs.KeptPath(t, name)
}

// keptProbe returns the kept recordings of Probe: one from the JVM's
// start, one started with jcmd after warm-up (two runs; internal/jfr/testdata/README.md).
func keptProbe(t testing.TB) (start, after probeRec) {
	t.Helper()
	return recs.KeptProbe(t)
}

// liveProbe records Probe once per test binary (timing tier only) and
// returns both of its recordings.
func liveProbe(t *testing.T) (start, after probeRec) {
	t.Helper()
	return recs.LiveProbe(t, jfr.FindTool)
}

// eventsOf reads the events of the recording at path with the binary
// reader (the analysis's event source), once per path.
var evCache struct {
	mu  sync.Mutex
	evs map[string][]jfr.Event
}

func events(t testing.TB, path string) []jfr.Event {
	t.Helper()
	evCache.mu.Lock()
	defer evCache.mu.Unlock()
	if evs, ok := evCache.evs[path]; ok {
		return evs
	}
	var evs []jfr.Event
	err := jfr.ReadEvents(context.Background(), path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		evs = append(evs, *ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if evCache.evs == nil {
		evCache.evs = map[string][]jfr.Event{}
	}
	evCache.evs[path] = evs
	return evs
}

// analyse runs the analyser over a recording.
func analyse(t testing.TB, path string, o jvm.Options) *budget.Result {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jvm.New(o, rec)
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, path)
	for i := range evs {
		ev := evs[i] // the analyser may keep what it is given; the cache is shared
		a.Event(&ev)
	}
	if err := a.Matched(); err != nil {
		t.Fatal(err)
	}
	return a.Finalize()
}

// loadOf counts Probe's requests (its results file) inside the recording.
func loadOf(t testing.TB, p probeRec) *jvm.Requests {
	t.Helper()
	rec, err := jfr.ReadRecording(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p.Results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := jvm.CountRequests(loadgen.NewDecoder(f), rec.Start(), rec.End())
	if err != nil {
		t.Fatal(err)
	}
	return &q
}

// probeOptions are the options for Probe: its pool is Probe$Pool.
func probeOptions(load *jvm.Requests) jvm.Options {
	o := jvm.DefaultOptions
	o.Handler = "Probe.handle"
	o.Load = load
	o.Rules.Pools = append(o.Rules.Pools[:len(o.Rules.Pools):len(o.Rules.Pools)], "Probe$Pool.")
	return o
}
