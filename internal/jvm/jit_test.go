package jvm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
)

// TestJITFinding: the JIT compiler's share of the JVM's CPU is the JDK's
// own numbers. For each kept Probe recording, the compile rate and the
// JVM's cores are worked out from what the JDK's `jfr print` gave for it
// (the kept print: jdk.CompilerStatistics' totals, jdk.CPULoad), and the
// finding must say that rate, or be absent where it is within
// budget.JITShare of the JVM's CPU. probe-start was recorded from the
// JVM's start, so its warm-up finding says why and this one gives no
// advice; probe-after was started with jcmd 10.5 s in. svc-jcmd was started with jcmd JFR.start on Svc at 40 clients,
// a running JVM: it fires, with the advice.
func TestJITFinding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		advice bool // begun on a running JVM
	}{{"probe-start", false}, {"probe-after", true}} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rate, cores := printedCompileRate(t, name)
			f := keptAnalyzer(t, name).jitFinding()
			fires := rate > budget.JITShare*cores
			t.Logf("jfr print: %.3f s compiling a second, the JVM %.3f cores; finding: %v", rate, cores, f)
			switch {
			case fires != (f != nil):
				t.Fatalf("finding %v, want one: %v (%.3f s a second against %.0f %% of %.3f cores)", f, fires, rate, 100*budget.JITShare, cores)
			case f == nil:
				return
			case f.Kind != budget.FindJIT || !strings.Contains(f.Text, fmt.Sprintf("compiled for %.2f s of each second", rate)):
				t.Errorf("finding %q, want kind %v and %.2f s of each second", f.Text, budget.FindJIT, rate)
			case strings.Contains(f.Text, "started on a running JVM") != c.advice:
				t.Errorf("begun on a running JVM: %v; the finding gives that advice: %q", c.advice, f.Text)
			}
		})
	}
	t.Run("svc-jcmd", func(t *testing.T) {
		t.Parallel()
		res, _, _ := analyseSvc(t, "svc-jcmd")
		var text string
		for _, w := range res.Warnings {
			if f, ok := w.(*budget.Finding); ok && f.Kind == budget.FindJIT {
				text = f.Text
			}
		}
		t.Log(text)
		if !strings.Contains(text, "started on a running JVM") || !strings.Contains(text, "-XX:StartFlightRecording") {
			t.Errorf("the jcmd recording of a running Svc: JIT finding %q, want it with the advice", text)
		}
	})
}

// printedCompileRate reads the kept print of recording name that holds
// jdk.CompilerStatistics and returns the seconds compiled per second
// between its first and last sample, and the JVM's cores by jdk.CPULoad
// (the samples' shares over their intervals, the recording's first, blank
// one left out).
func printedCompileRate(t *testing.T, name string) (rate, cores float64) {
	t.Helper()
	tr, err := jfrtest.ReadTruth(name)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tr.Prints, func(p jfrtest.Print) bool {
		return p.Events == nil || slices.Contains(p.Events, "jdk.CompilerStatistics") && slices.Contains(p.Events, "jdk.CPULoad")
	})
	if i < 0 {
		t.Fatalf("%s: no kept print with jdk.CompilerStatistics and jdk.CPULoad (go run ./internal/jfr/internal/mkrecordings reprint)", name)
	}
	var comp []jfr.Event
	var hw int
	var busy, span float64
	var last jfr.Event
	for _, ev := range jfrtest.KeptPrint[jfr.Event](t, tr.Prints[i].File) {
		switch ev.Type {
		case "jdk.CompilerStatistics":
			comp = append(comp, ev)
		case "jdk.CPUInformation":
			hw = max(hw, ev.HWThreads)
		case "jdk.CPULoad":
			l := ev.Load
			if !last.Start.IsZero() && (l.JVMUser != 0 || l.JVMSystem != 0 || l.MachineTotal != 0) {
				d := ev.Start.Sub(last.Start).Seconds()
				busy += (l.JVMUser + l.JVMSystem) * d
				span += d
			}
			last = ev
		}
	}
	slices.SortFunc(comp, func(a, b jfr.Event) int { return a.Start.Compare(b.Start) })
	if len(comp) < 2 || hw == 0 || span == 0 {
		t.Fatalf("%s: %d compiler samples, %d hardware threads, %.1f s of CPU load in the print", name, len(comp), hw, span)
	}
	first, end := comp[0], comp[len(comp)-1]
	return (end.Compiler.Time - first.Compiler.Time).Seconds() / end.Start.Sub(first.Start).Seconds(), busy / span * float64(hw)
}
