package jfr_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/jfr"
	"github.com/latscope/latscope/jfr/jfrtest"
	"github.com/latscope/latscope/loadgen"
)

// One run of Probe per test binary: a JVM costs about a second to start and
// the recording after warm-up needs the warm-up first.
var probe struct {
	once sync.Once
	dir  string
	run  *jfrtest.Run
	err  error
	mu   sync.Mutex
	evs  map[string][]jfr.Event
}

func TestMain(m *testing.M) {
	code := m.Run()
	if probe.dir != "" {
		os.RemoveAll(probe.dir)
	}
	os.Exit(code)
}

// recorded returns the run of Probe, recording it the first time.
func recorded(t *testing.T) *jfrtest.Run {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the real JVM recording (about 15 s)")
	}
	probe.once.Do(func() {
		if _, err := jfr.FindTool(); err != nil {
			probe.err = err
			return
		}
		if probe.dir, probe.err = os.MkdirTemp("", "latscope-jfr-"); probe.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		probe.run, probe.err = jfrtest.Record(ctx, jfrtest.Options{Dir: probe.dir, Warmup: 10500 * time.Millisecond, After: 4 * time.Second, Overrides: jfrtest.DefaultOverrides})
	})
	if errors.Is(probe.err, jfrtest.ErrNoJDK) || errors.Is(probe.err, jfr.ErrNoJDK) {
		t.Skip("SKIP: no JDK on this machine, so no real JFR recording to test with: ", probe.err)
	}
	if probe.err != nil {
		t.Fatal(probe.err)
	}
	return probe.run
}

// events returns the events of the recording at path, printed once.
func events(t *testing.T, path string) []jfr.Event {
	t.Helper()
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if evs, ok := probe.evs[path]; ok {
		return evs
	}
	var evs []jfr.Event
	err := jfr.Print(context.Background(), path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		evs = append(evs, *ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if probe.evs == nil {
		probe.evs = map[string][]jfr.Event{}
	}
	probe.evs[path] = evs
	return evs
}

// analyse runs the analyser over a recording of the run.
func analyse(t *testing.T, path string, o jfr.Options) *budget.Result {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jfr.New(o, rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events(t, path) {
		a.Event(&events(t, path)[i])
	}
	if err := a.Matched(); err != nil {
		t.Fatal(err)
	}
	return a.Finalize()
}

// loadOf counts the run's requests inside the recording at path.
func loadOf(t *testing.T, run *jfrtest.Run, path string) *jfr.Requests {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(run.Results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := jfr.CountRequests(loadgen.NewDecoder(f), rec.Start(), rec.End())
	if err != nil {
		t.Fatal(err)
	}
	return &q
}

// probeOptions are the options for Probe: its pool is Probe$Pool.
func probeOptions(load *jfr.Requests) jfr.Options {
	o := jfr.DefaultOptions
	o.Handler = "Probe.handle"
	o.Load = load
	o.Rules.Pools = append(o.Rules.Pools[:len(o.Rules.Pools):len(o.Rules.Pools)], "Probe$Pool.")
	return o
}
