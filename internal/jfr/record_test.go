package jfr_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/tier"
)

// probeRec is a recording of internal/jfr/testdata/Probe.java and Probe's own
// results (its requests, as `latscope load` JSON lines, with its timings of
// each part) over the run.
type probeRec struct {
	name, path, results string
	fromStart           bool // recorded from the JVM's start (with a jcmd recording inside it)
}

// kept holds the kept recordings unpacked for this test binary.
var kept struct {
	mu    sync.Mutex
	dir   string
	paths map[string]string
}

// One live run of Probe per test binary (timing tier): a JVM costs about a
// second to start and the recording after warm-up needs the warm-up first.
var probe struct {
	once sync.Once
	dir  string
	run  *jfrtest.Run
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{probe.dir, kept.dir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// keptPath returns the path of the kept recording NAME.jfr
// (internal/jfr/testdata/rec), unpacked once if it is kept gzipped.
func keptPath(t testing.TB, name string) string {
	t.Helper()
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if p, ok := kept.paths[name]; ok {
		return p
	}
	if kept.dir == "" {
		d, err := os.MkdirTemp("", "latscope-kept-")
		if err != nil {
			t.Fatal(err)
		}
		kept.dir, kept.paths = d, map[string]string{}
	}
	p, err := jfrtest.Kept(name, kept.dir)
	if err != nil {
		t.Fatal(err)
	}
	kept.paths[name] = p
	return p
}

// keptTruth reads the kept NAME.json.
func keptTruth(t testing.TB, name string) *jfrtest.Truth {
	t.Helper()
	tr, err := jfrtest.ReadTruth(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// keptPrint reads a kept output of jfr print (jfrtest.Print).
func keptPrint(t testing.TB, file string) []jfr.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(jfrtest.KeptDir(), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var evs []jfr.Event
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev jfr.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return evs
}

// keptProbe returns the kept recordings of Probe: one from the JVM's
// start, one started with jcmd after warm-up (two runs; internal/jfr/testdata/README.md).
func keptProbe(t testing.TB) (start, after probeRec) {
	t.Helper()
	res := func(name string) string { return filepath.Join(jfrtest.KeptDir(), keptTruth(t, name).Results) }
	return probeRec{"from JVM start", keptPath(t, "probe-start"), res("probe-start"), true},
		probeRec{"after warm-up", keptPath(t, "probe-after"), res("probe-after"), false}
}

// liveProbe records Probe once per test binary (timing tier only) and
// returns both of its recordings.
func liveProbe(t *testing.T) (start, after probeRec) {
	t.Helper()
	tier.Require(t, "recording Probe under JFR")
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
		t.Skip("LOUD SKIP: no JDK on this machine, so no live JFR recording to test with: ", probe.err)
	}
	if probe.err != nil {
		t.Fatal(probe.err)
	}
	r := probe.run
	return probeRec{"from JVM start", r.FromStart, r.Results, true}, probeRec{"after warm-up", r.AfterWarmup, r.Results, false}
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
func analyse(t testing.TB, path string, o jfr.Options) *budget.Result {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jfr.New(o, rec)
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
func loadOf(t testing.TB, p probeRec) *jfr.Requests {
	t.Helper()
	rec, err := jfr.ReadRecording(p.path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p.results)
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
