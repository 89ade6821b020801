package jvm

import (
	"flag"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
)

// What the external tests (package jvm_test) need of the internal ones.

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// PrintResult analyses internal/jfr/testdata/print.json with o (TestAnalyzeGolden).
func PrintResult(t *testing.T, o Options) *budget.Result {
	t.Helper()
	return run(t, o, printRecording, printEvents(t))
}

// PrintEvents are internal/jfr/testdata/print.json's recording and events, for the
// analyses beside the budget's (TestAnalyzeGolden's churn).
func PrintEvents(t *testing.T) (*jfr.Recording, []jfr.Event) {
	t.Helper()
	return printRecording, printEvents(t)
}
