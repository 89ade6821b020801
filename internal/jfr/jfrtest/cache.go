package jfrtest

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

	"github.com/latscope/latscope/internal/tier"
)

// ProbeRec is a recording of internal/jfr/testdata/Probe.java and Probe's
// own results (its requests, as `latscope load` JSON lines, with its timings
// of each part) over the run.
type ProbeRec struct {
	Name, Path, Results string
	FromStart           bool // recorded from the JVM's start (with a jcmd recording inside it)
}

// Cache is what one test binary unpacks or records at most once: the kept
// recordings unpacked (Kept), and one live run of Probe (Record) for the
// timing tier, where a JVM costs about a second to start and the recording
// after warm-up needs the warm-up first. The tests of the reader (package
// jfr) and of the analysis (package jvm) each hold one; Remove, from
// TestMain, deletes what it made.
type Cache struct {
	mu    sync.Mutex
	dir   string
	paths map[string]string

	probe struct {
		once sync.Once
		dir  string
		run  *Run
		err  error
		// noTool: findTool failed, the JDK's jfr tool is missing
		noTool bool
	}
}

// Remove deletes the unpacked and the live recordings.
func (c *Cache) Remove() {
	for _, d := range []string{c.probe.dir, c.dir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

// KeptPath returns the path of the kept recording NAME.jfr
// (internal/jfr/testdata/rec), unpacked once if it is kept gzipped.
func (c *Cache) KeptPath(t testing.TB, name string) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.paths[name]; ok {
		return p
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "latscope-kept-")
		if err != nil {
			t.Fatal(err)
		}
		c.dir, c.paths = d, map[string]string{}
	}
	p, err := Kept(name, c.dir)
	if err != nil {
		t.Fatal(err)
	}
	c.paths[name] = p
	return p
}

// KeptPrint reads a kept output of jfr print (Print): its events, in
// order, each a JSON line decoded into an E (a jfr.Event, which this
// package cannot name: jfr's own tests import it).
func KeptPrint[E any](t testing.TB, file string) []E {
	t.Helper()
	f, err := os.Open(filepath.Join(KeptDir(), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var evs []E
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev E
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

// KeptTruth reads the kept NAME.json.
func KeptTruth(t testing.TB, name string) *Truth {
	t.Helper()
	tr, err := ReadTruth(name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// KeptProbe returns the kept recordings of Probe: one from the JVM's
// start, one started with jcmd after warm-up (two runs;
// internal/jfr/testdata/README.md).
func (c *Cache) KeptProbe(t testing.TB) (start, after ProbeRec) {
	t.Helper()
	res := func(name string) string { return filepath.Join(KeptDir(), KeptTruth(t, name).Results) }
	return ProbeRec{"from JVM start", c.KeptPath(t, "probe-start"), res("probe-start"), true},
		ProbeRec{"after warm-up", c.KeptPath(t, "probe-after"), res("probe-after"), false}
}

// LiveProbe records Probe once per test binary (timing tier only) and
// returns both of its recordings. findTool is package jfr's FindTool: its
// error, the JDK's jfr tool missing, skips the test, as Record's ErrNoJDK
// does.
func (c *Cache) LiveProbe(t *testing.T, findTool func() (string, error)) (start, after ProbeRec) {
	t.Helper()
	tier.Require(t, "recording Probe under JFR")
	p := &c.probe
	p.once.Do(func() {
		if _, err := findTool(); err != nil {
			p.err, p.noTool = err, true
			return
		}
		if p.dir, p.err = os.MkdirTemp("", "latscope-jfr-"); p.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		p.run, p.err = Record(ctx, Options{Dir: p.dir, Warmup: 10500 * time.Millisecond, After: 4 * time.Second, Overrides: DefaultOverrides})
	})
	if p.noTool || errors.Is(p.err, ErrNoJDK) {
		t.Skip("LOUD SKIP: no JDK on this machine, so no live JFR recording to test with: ", p.err)
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	r := p.run
	return ProbeRec{"from JVM start", r.FromStart, r.Results, true}, ProbeRec{"after warm-up", r.AfterWarmup, r.Results, false}
}

// ProbeDir is the directory of the live recordings of Probe, removed by
// Remove; "" before LiveProbe ran.
func (c *Cache) ProbeDir() string { return c.probe.dir }
