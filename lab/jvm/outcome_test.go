package jvm

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/golden"
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
	saved := savedRun(t)
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

var update = flag.Bool("update", false, "rewrite testdata/saturate.golden.md")

// syntheticSaturate is a saturation run with round numbers near a short
// run's on the 2-core host: the engine predicts 380/s at 32 clients where
// 465/s were measured.
func syntheticSaturate() *SaturateRun {
	return &SaturateRun{Clients: 4, SatClients: 32, LockFrame: LockFrame, Recording: "lock-4/recording.jfr", Results: "lock-4/results.jsonl",
		SatResults: "lock-32/results.jsonl",
		Command:    "latscope predict --clients 4 --pool JvmService.lockedSection:1 --what-if clients=32 lock-4/recording.jfr",
		Low:        LoadSummary{Requests: 1200, RPS: 200, MeanMs: 19.5, P50Ms: 14.5, P99Ms: 73},
		High:       LoadSummary{Requests: 2700, RPS: 445, MeanMs: 71, P50Ms: 68, P99Ms: 178},
		OwnLow: LockOwn{Requests: 1140, MeanMs: 16, CPUMs: 2.2, CPUSEMs: 0.004, WaitMs: 0.7, HoldMs: 1.98, HoldCPUMs: 1.45, HoldCPUSEMs: 0.001,
			HandOffs: 400, HandOffMs: 0.185},
		OwnHigh: LockOwn{Requests: 2330, MeanMs: 68, CPUMs: 2.08, CPUSEMs: 0.001, WaitMs: 52, HoldMs: 2.03, HoldCPUMs: 1.45, HoldCPUSEMs: 0.001,
			HandOffs: 2250, HandOffMs: 0.1},
		CPULowMs: 2.5, CPUHighMs: 2.2,
		Library: LockLibrary{RequestMode: true, Requests: 1160, MeanMs: 16.4, CPUExact: true, CPUMs: 2.22, HoldCPUMs: 1.46, HoldMs: 2,
			HandOffMs: 0.7, Contended: 600},
		Prediction: LockPrediction{Spec: "clients=32", Method: "queueing model", Why: "changes the queueing model's inputs; queue at pool JvmService.lockedSection: 1.4 ms per request before, 66.2 ms after (0.654 ms measured)",
			RPS: 380, RPSSE: 21, RPSDF: 33, MeanMs: 81.6, ModelRPS: 371, Bottleneck: LockFrame, BottleUtil: 1, CPUDemandMs: 2.22, Cores: 2,
			LockDemandMs: 2.7, ModelLowRPS: 190, MeasLowRPS: 213, HoldsAloneRPS: 512, OwnHandOffRPS: 470},
		MeasuredRPS: 465, MeasuredSE: 17, Seconds: 5,
		Findings: []string{"request CPU is exact: 2.22 ms per request"}}
}

// TestSaturate: a synthetic saturation run through the checks and the
// report's section (testdata/saturate.golden.md; -update rewrites it), and
// the verdicts its numbers give: the throughput's error (−18 %, interval
// −29 to −7) across the ±10 % band, wholly outside it once the measured
// throughput is pinned down; the two CPU ratios inside theirs; the lock
// named the bottleneck, and a failure when the model names the CPU.
func TestSaturate(t *testing.T) {
	s := syntheticSaturate()
	cs := saturateChecks(s)
	want := map[string][2]string{
		"saturate: throughput at 32 clients, predicted vs measured (error %)":  {lab.Inconclusive, "-29.4 to -7.1"},
		"saturate: the library's request CPU / the service's ThreadMXBean (%)": {lab.Pass, "100.5–101.3"},
		"saturate: the hold's CPU, library / the service's own timer (%)":      {lab.Pass, "100.6–100.8"},
		"saturate: the model's bottleneck at 32 clients":                       {lab.Pass, "exact"},
	}
	if len(cs) != len(want) {
		t.Fatalf("%d checks, want %d", len(cs), len(want))
	}
	for _, c := range cs {
		w, ok := want[c.Name]
		if !ok || c.Status() != w[0] || c.Interval() != w[1] {
			t.Errorf("%s: %s, interval %s; want %v", c.Name, c.Status(), c.Interval(), w)
		}
	}
	var b strings.Builder
	saturateSection(&b, DefaultConfig, s)
	b.WriteString("\n")
	b.WriteString((&lab.Outcome{Title: "The saturation path", Checks: cs}).Report("jvm", "/tmp/x", 0, time.Unix(0, 0), 0))
	golden.Check(t, "testdata/saturate.golden.md", []byte(b.String()), *update)

	s.MeasuredSE, s.Prediction.RPSSE = 2, 2
	if c := saturateChecks(s)[0]; c.Status() != lab.Fail {
		t.Errorf("throughput −18 %% with tight intervals: %s (%s), want a failure", c.Status(), c.Interval())
	}
	s.Prediction.Bottleneck = "CPU"
	if c := saturateChecks(s)[3]; c.Status() != lab.Fail || c.Got != "CPU" {
		t.Errorf("bottleneck CPU: %s, got %q; want a failure", c.Status(), c.Got)
	}
	// on a host whose other processes held cores from the service (the
	// model charged their share) the CPU bounds it first: no failure
	s.Prediction.OthersShare = 0.45
	if c := saturateChecks(s)[3]; c.Status() != lab.Pass || !strings.Contains(c.Want, "45 % of its cores") {
		t.Errorf("bottleneck CPU with the others' share charged: %s (want %q); want a pass naming the share", c.Status(), c.Want)
	}
}

// TestOutcomeWithSaturate: the saturation run joins the report — its
// section before the findings (now section 8), its findings and command,
// its four checks after the others, its HTML section — and the JSON.
func TestOutcomeWithSaturate(t *testing.T) {
	saved := savedRun(t)
	o, err := outcome(&lab.Env{Profile: saved.Profile}, DefaultConfig, saved.Runs, saved.Bursts, syntheticSaturate(), saved.Config.LoadAvgAtStart)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(o.Checks); n != len(saved.Checks)+1+4 || !strings.HasPrefix(o.Checks[n-4].Name, "saturate: ") {
		t.Errorf("%d checks; want the run's %d, one split in two, and the four of the saturation run last", n, len(saved.Checks))
	}
	for _, want := range []string{"## 7. A CPU-bound lock at a saturating concurrency", "## 8. Findings of the JFR analysis",
		"- lock, 4 clients: request CPU is exact", "    latscope analyze lock-4/recording.jfr"} {
		if !strings.Contains(o.Markdown, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(string(o.HTML), "A CPU-bound lock at a saturating concurrency") {
		t.Error("HTML report lacks the saturation section")
	}
	js, err := json.Marshal(o.JSON)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil || back.Saturate == nil || back.Saturate.Prediction.RPS != 380 {
		t.Errorf("JSON round trip: %v, saturate %+v", err, back.Saturate)
	}
}

// savedRun is testdata/default-run.json: a real run's result, kept.
func savedRun(t *testing.T) Result {
	t.Helper()
	b, err := os.ReadFile("testdata/default-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var saved Result
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	return saved
}
