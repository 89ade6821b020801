package jvm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jvm"
	"github.com/latscope/latscope/internal/render"
)

func readRecording(t *testing.T, path string) *jfr.Recording {
	t.Helper()
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// reportText renders a result as the CLI prints it.
func reportText(t *testing.T, res *budget.Result) string {
	t.Helper()
	rep, err := render.Build(res, render.Inputs{File: "recording.jfr", CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAnalyzeEntry: Analyze, which reads the recording itself through jfr.ReadEvents, gives
// the report the analyser gives for the same events fed one at a time, in handler mode
// (Probe, after warm-up) and in request mode (the Java library's demo, lib.jfr).
func TestAnalyzeEntry(t *testing.T) {
	t.Setenv(jfr.ReaderEnv, "binary") // whatever the caller's environment says
	_, after := keptProbe(t)
	lib := keptPath(t, "lib")
	for _, tt := range []struct {
		name, path string
		o          jvm.Options
	}{
		{"handler mode", after.Path, probeOptions(loadOf(t, after))},
		{"request mode", lib, jvm.DefaultOptions},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jvm.Analyze(context.Background(), tt.path, readRecording(t, tt.path), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reportText(t, got), reportText(t, analyse(t, tt.path, tt.o)); g != w {
				t.Errorf("Analyze's report differs from the events' one by one:\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// TestAnalyzeErrors: what Analyze refuses, and how it says so.
func TestAnalyzeErrors(t *testing.T) {
	t.Setenv(jfr.ReaderEnv, "binary")
	_, after := keptProbe(t)
	ctx := context.Background()
	if _, err := jvm.Analyze(ctx, after.Path, nil, jvm.DefaultOptions); err == nil || err.Error() != "no recording headers" {
		t.Errorf("without the headers: %v", err)
	}
	rec := readRecording(t, after.Path)
	o := probeOptions(nil)
	o.Handler, o.Requests = "Probe.handel", 84
	_, err := jvm.Analyze(ctx, after.Path, rec, o)
	if err == nil || !strings.HasPrefix(err.Error(), after.Path+": ") || !strings.Contains(err.Error(), `"Probe.handel": no wait or sample among`) ||
		!strings.Contains(err.Error(), "closest application frames: Probe.handle") {
		t.Errorf("a misspelt handler: %v; want it refused, naming the file and the closest frame", err)
	}
	// a recording cut short: the reader's error as it is
	b, err := os.ReadFile(after.Path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "probe-after.jfr")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	o.Handler = "Probe.handle"
	if _, err := jvm.Analyze(ctx, cut, rec, o); err == nil || !strings.HasPrefix(err.Error(), cut+": byte 8: chunk at 0: chunk size") {
		t.Errorf("a recording cut in half: %v", err)
	}
	t.Setenv(jfr.ReaderEnv, "jdk")
	if _, err := jvm.Analyze(ctx, after.Path, rec, o); err == nil || err.Error() != `$LATSCOPE_JFR_READER="jdk": want binary or print` {
		t.Errorf("an unknown reader: %v", err)
	}
}

// findingText returns the text of the first finding of kind k containing s, or "".
func findingText(res *budget.Result, k budget.FindingKind, s string) string {
	for _, w := range res.Warnings {
		if f, ok := w.(*budget.Finding); ok && f.Kind == k && strings.Contains(f.Text, s) {
			return f.Text
		}
	}
	return ""
}

// TestRequestModeOptions: handler-mode options given for a recording whose requests the
// library marks are reported as not used, with the count compared with the events'; a
// prediction that names no term is refused with the closest frames.
func TestRequestModeOptions(t *testing.T) {
	t.Parallel()
	lib := keptPath(t, "lib")
	res := analyse(t, lib, jvm.DefaultOptions)
	n := 0
	for _, g := range res.Groups {
		n += g.Count
	}
	if n != 8 {
		t.Fatalf("lib.jfr: %d requests, want LibDemo's 8", n)
	}
	tests := []struct {
		name string
		set  func(o *jvm.Options)
		kind budget.FindingKind
		want string
	}{
		{"handler and a count", func(o *jvm.Options) { o.Handler, o.Requests = "LibDemo.handle", 10 }, budget.FindInferred,
			"--handler LibDemo.handle is not used: the latscope.Request events mark the requests; --requests counts 10 requests but the recording has 8 latscope.Request events inside it"},
		{"load results", func(o *jvm.Options) { o.Load = &jvm.Requests{Count: 8} }, budget.FindInferred,
			"--requests-from counts 8 requests, as many as the recording's latscope.Request events"},
		{"a prediction of no term", func(o *jvm.Options) {
			p, err := budget.ParsePrediction("remove=LibDemo.nosuch")
			if err != nil {
				t.Fatal(err)
			}
			o.Predictions = []budget.Prediction{p}
		}, budget.FindNoMatch, `prediction "remove=LibDemo.nosuch" matches no term of the recording`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := jvm.DefaultOptions
			tt.set(&o)
			if got := findingText(analyse(t, lib, o), tt.kind, tt.want); got == "" {
				t.Errorf("no %v finding saying %q", tt.kind, tt.want)
			}
		})
	}
	if got := findingText(res, budget.FindInferred, "is not used"); got != "" {
		t.Errorf("without handler-mode options: %q", got)
	}
}

// TestCPULoad: what jdk.CPULoad says over Probe's recording, as shares of the hardware
// threads, and nothing for the library's edge cases (edge.jfr), too short for one
// (jdk.CPULoad comes once a second).
func TestCPULoad(t *testing.T) {
	t.Parallel()
	_, after := keptProbe(t)
	for _, tt := range []struct {
		path string
		o    jvm.Options
		ok   bool
	}{
		{after.Path, probeOptions(loadOf(t, after)), true},
		{keptPath(t, "edge"), jvm.DefaultOptions, false},
	} {
		rec := readRecording(t, tt.path)
		a, err := jvm.New(tt.o, rec)
		if err != nil {
			t.Fatal(err)
		}
		evs := events(t, tt.path)
		hw := 0
		for i := range evs {
			ev := evs[i]
			a.Event(&ev)
			hw = max(hw, ev.HWThreads)
		}
		jvm, jvmShare, machine, ok := a.CPULoad()
		if !tt.ok {
			if ok || jvm != 0 || jvmShare != 0 || machine != 0 {
				t.Errorf("%s: %v, %g, %g, %v; want nothing", tt.path, jvm, jvmShare, machine, ok)
			}
			continue
		}
		d := rec.End().Sub(rec.Start())
		if !ok || hw == 0 || jvmShare <= 0 || jvmShare > machine || machine > 1 {
			t.Errorf("%s: JVM %g and machine %g of %d hardware threads (%v); want 0 < JVM ≤ machine ≤ 1", tt.path, jvmShare, machine, hw, ok)
		}
		if want := time.Duration(jvmShare * float64(hw) * float64(d)); jvm != want {
			t.Errorf("%s: JVM CPU %v, want its share × %d threads × %v = %v", tt.path, jvm, hw, d, want)
		}
	}
}
