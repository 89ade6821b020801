package jvm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/lab"
)

// TestOutcomeFromARun rebuilds the report of a real default run
// (testdata/default-run.json: `latscope lab jvm`'s JSON on the 2-core
// development host at load average 9.4) from its runs: the same checks
// with the same verdicts, the Markdown sections and the HTML page.
func TestOutcomeFromARun(t *testing.T) {
	b, err := os.ReadFile("testdata/default-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var saved Result
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	env := &lab.Env{Profile: saved.Profile}
	o, err := outcome(env, DefaultConfig, saved.Runs, saved.Bursts, saved.Config.LoadAvgAtStart)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Checks) != len(saved.Checks) {
		t.Fatalf("%d checks, the run had %d", len(o.Checks), len(saved.Checks))
	}
	for i, c := range o.Checks {
		if s := saved.Checks[i]; c.Name != s.Name || c.OK != s.OK {
			t.Errorf("check %d: %q ok=%v, the run had %q ok=%v", i, c.Name, c.OK, s.Name, s.OK)
		}
	}
	for _, want := range []string{"## 1. Two profiles", "## 3. Budget per mode", "## 4. Predictions", "## 5. Two instruments", "## 6. ForkJoinPool bursts", "latscope analyze --predict overlap=callUpstream,queryDb"} {
		if !strings.Contains(o.Markdown, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, want := range []string{"<html", "Two profiles, two different answers", "ForkJoinPool bursts", "Checks"} {
		if !strings.Contains(string(o.HTML), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}
