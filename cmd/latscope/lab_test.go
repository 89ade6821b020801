package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/latscope/latscope/lab"
	"github.com/latscope/latscope/lab/seed"
	"github.com/latscope/latscope/pgcluster"
)

// TestLabShort runs the seed lab end to end on real parts — the demo
// service as its own process, a real upstream, a private PostgreSQL,
// closed-model load — with 3 s windows, and asserts the shape of the
// result (the lab's own checks), not absolute times.
func TestLabShort(t *testing.T) {
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP (loud): the seed lab needs PostgreSQL server binaries: %v", err)
	}
	if testing.Short() {
		t.Skip("SKIP: -short: the lab takes about 20 s")
	}
	out := t.TempDir()
	la0 := lab.LoadAverage()
	stdout, stderr, err := runCLI(t, "lab", "--short", "-o", out)
	if err != nil && !strings.Contains(err.Error(), "checks failed") {
		t.Fatalf("lab: %v\nstderr:\n%s\nstdout:\n%s", err, stderr, stdout)
	}
	for _, f := range []string{"report.md", "report.html", "seed.json", "serial-1/trace.out", "serial-1/cpu.pprof", "serial-1/capture.json", "concurrent-1/trace.out", "fixed-1/trace.out", "lab.log"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("lab wrote no %s", f)
		}
	}
	for _, want := range []string{"## 1. Two profiles", "## 4. Predictions", "Checks (", "overlap=callUpstream,queryDB"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var res seed.Result
	b, _ := os.ReadFile(filepath.Join(out, "seed.json"))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || len(res.Predictions) != 3 {
		t.Errorf("seed.json: %d runs, %d predictions; want 3 and 3", len(res.Runs), len(res.Predictions))
	}
	// The shape (the acceptance for this test, not absolute times):
	// the structural checks always hold; the two fixes are told apart —
	// overlapping the waits is predicted and measured to gain a lot, the
	// CPU profile's favourite (the shared section) to gain almost nothing.
	// The lab's own precision checks (prediction within 5 %, coverage
	// 95–103 %) are logged: on a shared 2-core machine they depend on what
	// else runs, and the lab itself reports them.
	for _, c := range res.Checks {
		structural := strings.Contains(c.Name, "sum / mean") || strings.Contains(c.Name, "critical path / mean") || strings.Contains(c.Name, "#1")
		switch {
		case c.OK:
			t.Logf("pass: %s: got %s (want %s)", c.Name, c.Got, c.Want)
		case structural:
			t.Errorf("check failed: %s: got %s, want %s", c.Name, c.Got, c.Want)
		default:
			t.Logf("precision check not met (load average %.1f → %.1f on %d CPUs): %s: got %s, want %s", la0, lab.LoadAverage(), runtime.NumCPU(), c.Name, c.Got, c.Want)
		}
	}
	for _, p := range res.Predictions {
		switch {
		case p.Spec == seed.SerialPredictions[0] && (p.PredictedGain < 20 || p.MeasuredGain < 20):
			t.Errorf("overlap: predicted gain %.1f%%, measured %.1f%%; want both over 20%% (the seed: 32%%)", p.PredictedGain, p.MeasuredGain)
		case p.Against == "fixed vs concurrent" && (p.PredictedGain > 5 || p.MeasuredGain > 5):
			t.Errorf("remove shared section: predicted gain %.1f%%, measured %.1f%%; want both small", p.PredictedGain, p.MeasuredGain)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*.partial"))
	if len(matches) > 0 {
		t.Errorf("partial files left behind: %v", matches)
	}
}

func TestLabList(t *testing.T) {
	stdout, _, err := runCLI(t, "lab", "--list")
	if err != nil || !strings.Contains(stdout, "seed") {
		t.Fatalf("lab --list: %v\n%s", err, stdout)
	}
	if _, _, err := runCLI(t, "lab", "--short", "-o", t.TempDir(), "nope"); err == nil || !strings.Contains(err.Error(), `unknown scenario "nope"`) {
		t.Errorf("unknown scenario: %v", err)
	}
	if _, _, err := runCLI(t, "lab", "--full", "--short"); err == nil {
		t.Error("--full --short accepted")
	}
}
