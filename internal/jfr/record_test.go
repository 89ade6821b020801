package jfr_test

import (
	"os"
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
	return jfrtest.KeptPrint[jfr.Event](t, file)
}

// liveProbe records Probe once per test binary (timing tier only) and
// returns both of its recordings.
func liveProbe(t *testing.T) (start, after jfrtest.ProbeRec) {
	t.Helper()
	return recs.LiveProbe(t, jfr.FindTool)
}
