package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/render"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// TestFile: one read gives the budget, the scheduler analysis and a report
// whose findings include the scheduler's; text and JSON carry both.
func TestFile(t *testing.T) {
	rec := fixture.Scenario(t, "serial")
	r, err := File(context.Background(), rec.Path, Options{Budget: budget.DefaultOptions, Report: render.Inputs{File: rec.Path, CPUSeconds: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sched == nil || r.Report.Sched == nil || len(r.Result.Groups) == 0 {
		t.Fatalf("sched %v, report sched %v, %d groups: want all three", r.Sched != nil, r.Report.Sched != nil, len(r.Result.Groups))
	}
	var text, js bytes.Buffer
	if err := r.Write(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(&js, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"sched"`) || !strings.Contains(text.String(), "latscope: ") {
		t.Errorf("JSON without the sched section, or text without the header")
	}
	if err := r.Unmatched(); err != nil {
		t.Errorf("Unmatched without predictions: %v", err)
	}
}

// TestFileErrors: damage is typed, and a bad CPU profile is an error of the
// option "cpu" (the CLI names its flag).
func TestFileErrors(t *testing.T) {
	rec := fixture.Scenario(t, "serial")
	data, err := os.ReadFile(rec.Path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Budget: budget.DefaultOptions, Report: render.Inputs{CPUSeconds: -1}}
	_, err = File(context.Background(), cut, opts)
	var de *analysis.DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "cut.trace") {
		t.Errorf("cut trace: %v, want a DamagedError naming the file", err)
	}
	opts.CPUProfile = rec.Path // a trace, not a profile
	_, err = File(context.Background(), rec.Path, opts)
	var oe *opterr.Error
	if !errors.As(err, &oe) || oe.Option != "cpu" || !strings.Contains(err.Error(), "not a pprof profile") {
		t.Errorf("bad profile: %v, want an error of the option cpu", err)
	}
	opts.CPUProfile = ""
	opts.Budget.Predictions = []budget.Prediction{{Spec: "remove=nosuchfunc", Op: budget.OpRemove, A: "nosuchfunc"}}
	r, err := File(context.Background(), rec.Path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unmatched(); !errors.As(err, &oe) || oe.Option != "what-if" {
		t.Errorf("unmatched prediction: %v, want an error of the option what-if", err)
	}
}
