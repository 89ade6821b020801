package jvm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/lab"
)

// TestOutcomeFromARun rebuilds the report of a real default run
// (testdata/default-run.json: `latscope-lab jvm`'s JSON on the 2-core
// development host at load average 9.4) from its runs: the same checks,
// each failed now only if it failed then (a check judged by its 95 %
// interval fails only when the interval lies wholly outside its band),
// with the verdicts and intervals the run's numbers give, the Markdown
// sections and the HTML page. The run predates the kept batch-means SE:
// its means take s/√n.
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
	o, err := outcome(env, DefaultConfig, saved.Runs, saved.Bursts, saved.Saturate, saved.Config.LoadAvgAtStart)
	if err != nil {
		t.Fatal(err)
	}
	then := map[string]lab.Check{}
	for _, c := range saved.Checks {
		then[c.Name] = c
	}
	// The one check that became two: churn on fan-out and on batched.
	split := then["burst: churn flagged on fan-out, not on batched"]
	if len(o.Checks) != len(saved.Checks)+1 {
		t.Errorf("%d checks, the run had %d (one split in two)", len(o.Checks), len(saved.Checks))
	}
	byName := map[string]lab.Check{}
	for _, c := range o.Checks {
		byName[c.Name] = c
		s, ok := then[c.Name]
		if strings.HasPrefix(c.Name, "burst: churn") {
			s, ok = split, true
		}
		if !ok {
			t.Errorf("check %q: not in the run", c.Name)
			continue
		}
		if c.OK != s.OK {
			t.Errorf("check %q: not failed %v (%s, %s against %s), the run had ok=%v", c.Name, c.OK, c.Got, c.Interval(), c.Want, s.OK)
		}
	}
	for name, want := range map[string]struct{ verdict, interval string }{
		"overlap predicted vs measured concurrent mean (error %)":          {lab.Fail, "-8.1 to -6.1"}, // −7.1 %: a miss, wholly outside ±5
		"serial: JFR query term (network) vs the configured pg_sleep (ms)": {lab.Inconclusive, "54.0–55.7"},
		"fixed: JFR waits + independent CPU / mean (%)":                    {lab.Inconclusive, "94.3–97.6"},
		"remove shared section: measured gain, fixed vs concurrent (%)":    {lab.Pass, "-3.7 to -1.4"},
		"burst: churn flagged on fan-out (pool machinery share, %)":        {lab.Pass, "13.2–19.0"},
		"burst: churn not flagged on batched (pool machinery share, %)":    {lab.Pass, "1.2–3.3"},
		"burst: batching lowers CPU per request (independent counter)":     {lab.Pass, "36.3–40.0"},
		"serial: JFR upstream term / the service's own timing of it (%)":   {lab.Pass, "exact"},
	} {
		c := byName[name]
		if c.Status() != want.verdict || c.Interval() != want.interval {
			t.Errorf("%s: %s, interval %s; want %s, %s", name, c.Status(), c.Interval(), want.verdict, want.interval)
		}
	}
	res := o.JSON.(*Result)
	if p := res.Predictions[0]; p.PredictedGainInterval == nil || p.MeasuredGainInterval == nil || p.MeasuredGainInterval.High < 20 || p.PredictedGainInterval.High < 20 {
		t.Errorf("overlap gains: predicted %.1f %v, measured %.1f %v; want intervals reaching above 20 %%", p.PredictedGain, p.PredictedGainInterval, p.MeasuredGain, p.MeasuredGainInterval)
	}
	md := o.Report("jvm", "/tmp/x", 0, time.Unix(0, 0), 0)
	for _, want := range []string{"## Checks (13 of 16 passed, 2 inconclusive, 1 failed)", "| overlap predicted vs measured concurrent mean (error %) | within ±5 | -7.1 | -8.1 to -6.1 | **FAIL** |",
		"s/√n, as if the requests were independent"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md[strings.Index(md, "## Checks"):])
		}
	}
	for _, want := range []string{"## 1. Two profiles", "## 3. Budget per mode", "## 4. Predictions", "## 5. Two instruments", "## 6. ForkJoinPool bursts", "latscope analyze --what-if overlap=callUpstream,queryDb"} {
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
