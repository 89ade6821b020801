package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
	la0 := loadAvg()
	stdout, stderr, err := runCLI(t, "lab", "--short", "-o", out)
	if err != nil && !strings.Contains(err.Error(), "checks failed") {
		t.Fatalf("lab: %v\nstderr:\n%s\nstdout:\n%s", err, stderr, stdout)
	}
	for _, f := range []string{"report.md", "seed.json", "serial-1.trace", "serial-1.cpu.pprof", "concurrent-1.trace", "fixed-1.trace", "lab.log"} {
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
	// Structural checks hold on any machine. Checks that compare timings of
	// separate runs (prediction errors, gains, CPU coverage) need a machine
	// that is not oversubscribed by other work while the lab runs.
	busy := max(la0, loadAvg()) > float64(runtime.NumCPU())
	for _, c := range res.Checks {
		structural := strings.Contains(c.Name, "sum / mean") || strings.Contains(c.Name, "critical path / mean") || strings.Contains(c.Name, "#1")
		switch {
		case c.OK:
			t.Logf("pass: %s: got %s (want %s)", c.Name, c.Got, c.Want)
		case structural || !busy:
			t.Errorf("check failed: %s: got %s, want %s", c.Name, c.Got, c.Want)
		default:
			t.Logf("NOT ASSERTED (load average %.1f on %d CPUs while the lab ran): %s: got %s, want %s", max(la0, loadAvg()), runtime.NumCPU(), c.Name, c.Got, c.Want)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*.partial"))
	if len(matches) > 0 {
		t.Errorf("partial files left behind: %v", matches)
	}
}

func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var la float64
	fmt.Sscanf(string(b), "%f", &la)
	return la
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
