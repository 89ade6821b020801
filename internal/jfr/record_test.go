package jfr_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
)

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

// keptTruth reads the kept NAME.json.
func keptTruth(t testing.TB, name string) *jfrtest.Truth {
	t.Helper()
	return jfrtest.KeptTruth(t, name)
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

// liveProbe records Probe once per test binary (timing tier only) and
// returns both of its recordings.
func liveProbe(t *testing.T) (start, after jfrtest.ProbeRec) {
	t.Helper()
	return recs.LiveProbe(t, jfr.FindTool)
}
