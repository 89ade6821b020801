package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
	"github.com/latscope/latscope/lab/jvm"
)

// TestLabJVMShort runs `latscope lab --short jvm` end to end on real parts —
// the JDK service and the JDK upstream as JVMs of their own, the io.latscope
// library built from java/, pgjdbc against a private PostgreSQL, closed-model
// load, JFR recordings started with jcmd after warm-up — and asserts what
// holds on any host: the files, the terms the configuration puts there
// (a wait is never shorter than the sleep that causes it), and the two fixes
// told apart. The lab's precision checks are logged: on a shared 2-core host
// they depend on what else runs, and the lab reports them itself.
func TestLabJVMShort(t *testing.T) {
	tier.Timing(t)
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP (loud): the JVM lab needs PostgreSQL server binaries: %v", err)
	}
	for _, tool := range []string{"java", "javac", "jcmd", "jfr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP (loud): the JVM lab needs a JDK 17 (%s not on PATH; Debian: apt-get install openjdk-17-jdk-headless)", tool)
		}
	}
	if _, err := os.Stat(jvm.PGJDBC); err != nil {
		t.Skipf("SKIP (loud): the JVM lab needs pgjdbc at %s (Debian: apt-get install libpostgresql-jdbc-java)", jvm.PGJDBC)
	}
	if testing.Short() {
		t.Skip("SKIP: -short: the JVM lab takes about 70 s")
	}
	out := t.TempDir()
	la0 := lab.LoadAverage()
	stdout, stderr, err := runCLI(t, "lab", "--short", "-o", out, "jvm")
	if err != nil && !strings.Contains(err.Error(), "checks failed") {
		t.Fatalf("lab jvm: %v\nstderr:\n%s\nstdout:\n%s", err, stderr, stdout)
	}
	for _, f := range []string{"report.md", "report.html", "jvm.json", "lab.log", "serial/recording.jfr", "serial/results.jsonl", "concurrent/recording.jfr",
		"fixed/recording.jfr", "burst-fan-out/recording.jfr", "burst-batched/recording.jfr"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("lab jvm wrote no %s", f)
		}
	}
	for _, want := range []string{"## 1. Two profiles", "## 4. Predictions", "## 6. ForkJoinPool bursts", "Checks (", "overlap=callUpstream,queryDb"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var res jvm.Result
	b, _ := os.ReadFile(filepath.Join(out, "jvm.json"))
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || len(res.Predictions) != 3 || len(res.Bursts) != 2 {
		t.Fatalf("jvm.json: %d runs, %d predictions, %d bursts; want 3, 3 and 2", len(res.Runs), len(res.Predictions), len(res.Bursts))
	}
	// Lower bounds from the configuration hold however busy the host is: a
	// wait lasts at least the sleep behind it (less the edge error of a
	// recording without request boundaries).
	s := res.Runs[0]
	cfg := jvm.DefaultConfig
	for _, term := range []struct {
		name      string
		got, conf float64
	}{{"upstream", s.JFR.Upstream, float64(cfg.UpstreamDelay.Milliseconds())}, {"query", s.JFR.DBNetwork, float64(cfg.DBDelay.Milliseconds())}} {
		if lo := term.conf * (1 - s.EdgePct/100); term.got < lo {
			t.Errorf("serial: JFR %s term %.2f ms per request, under the configured %.0f ms (less %.1f %% edge error)", term.name, term.got, term.conf, s.EdgePct)
		}
	}
	for _, r := range res.Runs {
		if r.Counted == 0 || r.Own.Requests == 0 || r.CPUPerMs <= 0 {
			t.Errorf("%s: %d requests counted in the recording, %d served by the service's own count, %.2f ms CPU each", r.Mode, r.Counted, r.Own.Requests, r.CPUPerMs)
		}
	}
	for _, c := range res.Checks {
		if c.OK {
			t.Logf("pass: %s: got %s (want %s)", c.Name, c.Got, c.Want)
		} else {
			t.Logf("check not met (load average %.1f → %.1f on %d CPUs): %s: got %s, want %s", la0, lab.LoadAverage(), runtime.NumCPU(), c.Name, c.Got, c.Want)
		}
	}
	for _, p := range res.Predictions {
		switch {
		// Overlapping takes min(upstream, query) ≈ 50 ms out of ≈ 160 ms:
		// the serial recording predicts about a third (the seed: 32 %).
		// The measured gain is smaller by the pool queue the change creates
		// and, on a busy host, by CPU waits: 20–37 % in our runs on a
		// 2-core host at load average 9–18, under 20 % once; 10 % still
		// tells a fix that works from one that does not.
		case p.Spec == "overlap=callUpstream,queryDb" && (p.PredictedGain < 20 || p.MeasuredGain < 10):
			t.Errorf("overlap: predicted gain %.1f%%, measured %.1f%%; want over 20%% and over 10%% (the seed: 32%%)", p.PredictedGain, p.MeasuredGain)
		case p.Against == "fixed vs concurrent" && p.PredictedGain > 5:
			t.Errorf("remove shared section: predicted gain %.1f%%; want it small (the lock wait is a few %% of the mean)", p.PredictedGain)
		}
	}
}
