package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/tier"
)

// fixtureTrace returns a checked-in real trace under testdata/, recording it
// with the real runtime when LATSCOPE_RETRACE=1 (then run -update too).
func fixtureTrace(t *testing.T, scenario string) string {
	t.Helper()
	path := filepath.Join("testdata", scenario+".trace")
	if os.Getenv("LATSCOPE_RETRACE") == "1" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := demotrace.DefaultConfig
		cfg.Scenario, cfg.CPUProfile, cfg.Requests = scenario, true, 30
		if _, err := demotrace.Record(context.Background(), f, cfg); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return path
}

func TestAnalyzeGolden(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	wg := fixtureTrace(t, "waitgroup")
	cases := []struct {
		name string
		args []string
	}{
		{"analyze-serial.stdout", []string{"analyze", serial}},
		{"analyze-serial-predict.stdout", []string{"analyze", "--predict", "overlap=callUpstream,queryDB", "--predict", "remove=lockedSection", "--predict", "scale=queryDB:0.5", "--cpu-seconds", "0.120", serial}},
		{"analyze-serial.json", []string{"analyze", "--json", "--cpu-seconds", "0.120", "--predict", "overlap=callUpstream,queryDB", serial}},
		{"analyze-waitgroup.stdout", []string{"analyze", wg}},
		{"analyze-waitgroup-frame.stdout", []string{"analyze", "--frame", "queryDB|callUpstream", wg}},
		{"analyze-waitgroup-tree.stdout", []string{"analyze", "--tree", "--predict", "remove=overlapWaitGroup>callUpstream", wg}},
		{"analyze-many.stdout", []string{"analyze", serial, wg}},
		{"analyze-many.json", []string{"analyze", "--json", serial, wg}},
		{"compare.stdout", []string{"compare", "--predict", "overlap=callUpstream,queryDB", "--predict", "remove=lockedSection", serial, wg}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, c.args...)
			if err := ignoreMiss(err); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			golden(t, c.name, stdout)
		})
	}
}

func TestAnalyzeJSONContract(t *testing.T) {
	stdout, _, err := runCLI(t, "analyze", "--json", "--predict", "remove=lockedSection", fixtureTrace(t, "serial"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	// The fields the first release promised (bars and users depend on them).
	for _, path := range []string{"requests.count", "requests.excluded", "requests.mean_ms", "requests.p50_ms", "requests.p99_ms",
		"cpu.running_ms", "cpu.runnable_ms", "cpu.independent_ms", "coverage.wait_sum_pct", "coverage.critical_pct"} {
		m := v
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			m, _ = m[p].(map[string]any)
		}
		if _, ok := m[parts[len(parts)-1]]; !ok {
			t.Errorf("JSON has no %s", path)
		}
	}
	terms, _ := v["terms"].([]any)
	if len(terms) == 0 {
		t.Fatal("JSON has no terms")
	}
	for _, k := range []string{"frame", "mechanism", "kind", "wait_ms", "share_pct", "requests", "critical_ms", "fix_potential_ms"} {
		if _, ok := terms[0].(map[string]any)[k]; !ok {
			t.Errorf("terms[0] has no %s", k)
		}
	}
	if cpu := v["cpu"].(map[string]any); cpu["independent_ms"] != nil {
		t.Errorf("independent_ms = %v without --cpu-seconds, want null", cpu["independent_ms"])
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.trace")
	os.WriteFile(empty, nil, 0o644)
	data, err := os.ReadFile(fixtureTrace(t, "serial"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.trace")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	serial := fixtureTrace(t, "serial")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty", []string{"analyze", empty}, "empty.trace: empty file, not a Go execution trace"},
		{"truncated", []string{"analyze", trunc}, "trunc.trace: offset"},
		{"not a trace", []string{"analyze", "main.go"}, "main.go: offset"},
		{"missing", []string{"analyze", filepath.Join(dir, "nope.trace")}, "no such file"},
		{"unknown task", []string{"analyze", "--task", "requets", serial}, `--task "requets" matches nothing (request types: request); closest: request`},
		{"frame matches nothing", []string{"analyze", "--frame", "^zzz", serial}, `--frame "^zzz" matches nothing`},
		{"prediction matches nothing", []string{"analyze", "--predict", "remove=lockSection", serial}, `prediction "remove=lockSection" matches no term (closest: `},
		{"bad prediction", []string{"analyze", "--predict", "shrink=x", serial}, `unknown operation "shrink"`},
		{"bad flag", []string{"analyze", "--bogus", serial}, "flag provided but not defined: -bogus"},
		{"no trace", []string{"analyze"}, "want a trace file (or - for standard input), several, or a directory of snapshots; got none"},
		{"empty directory", []string{"analyze", t.TempDir()}, "is a directory, not a trace file, and holds no *.trace file"},
		{"per-trace flag with several", []string{"analyze", "--predict", "remove=queryDB", serial, serial}, "--predict apply to one trace at a time"},
		{"standard input with others", []string{"analyze", serial, "-"}, "- (standard input) can only be analysed alone"},
		{"several, one missing", []string{"analyze", serial, filepath.Join(dir, "nope.trace")}, "nope.trace: no such file"},
		{"several, unknown task", []string{"analyze", "--task", "requets", serial, serial}, `--task "requets" matches nothing in any of the 2 traces (request types: request); closest: request`},
		{"unknown command", []string{"analyse", serial}, `unknown command "analyse"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := runExit(t, c.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if msg := oneLine(t, stderr); !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "latscope: ") {
				t.Errorf("stderr %q, want one line starting latscope: and containing %q", msg, c.want)
			}
		})
	}
	t.Run("partial", func(t *testing.T) {
		stdout, _, err := runCLI(t, "analyze", "--partial", trunc)
		if err != nil && !strings.Contains(err.Error(), "refused") { // what came before may hold no whole request
			t.Fatal(err)
		}
		if !strings.Contains(stdout, "the trace is damaged") {
			t.Errorf("--partial output does not say the trace is damaged:\n%s", stdout)
		}
	})
}

func TestHelp(t *testing.T) {
	for _, cmd := range []string{"analyze", "compare", "demo-trace", "load"} {
		stdout, _, err := runCLI(t, cmd, "-h")
		if err != nil {
			t.Fatalf("%s -h: %v", cmd, err)
		}
		if !strings.Contains(stdout, "usage: latscope "+cmd) || !strings.Contains(stdout, "examples:") {
			t.Errorf("%s -h prints no usage with examples:\n%s", cmd, stdout)
		}
	}
	if code, _ := runExit(t); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
}

// TestHelpNamesJFR: analyze and predict read a JVM recording as well as a
// Go trace (docs/jfr.md); their help, and the command list, say so.
func TestHelpNamesJFR(t *testing.T) {
	for _, args := range [][]string{{"analyze", "-h"}, {"predict", "-h"}, {"--help"}} {
		stdout, _, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if strings.Count(stdout, "JVM recording (.jfr)") != map[bool]int{true: 2, false: 1}[args[0] == "--help"] {
			t.Errorf("%v does not name JVM recordings where it names the input:\n%s", args, stdout)
		}
	}
}

func TestDemoTraceThenAnalyze(t *testing.T) {
	tier.Timing(t)
	out := filepath.Join(t.TempDir(), "demo.trace")
	stdout, _, err := runCLI(t, "demo-trace", "--requests", "12", "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "next: latscope analyze --cpu-seconds") {
		t.Errorf("demo-trace does not say what to run next:\n%s", stdout)
	}
	stdout, _, err = runCLI(t, "analyze", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"request: 12 requests", "demotrace.callUpstream", "demotrace.queryDB", "critical path of the median request"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("analyze output lacks %q:\n%s", want, stdout)
		}
	}
	if _, _, err := runCLI(t, "demo-trace", "--scenario", "nope", "-o", filepath.Join(t.TempDir(), "x.trace")); err == nil || !strings.Contains(err.Error(), `unknown scenario "nope"`) {
		t.Errorf("unknown scenario: err = %v", err)
	}
}

// TestAnalyzeNoRequests: a trace that holds no request is refused with a
// non-zero exit, after the report says why.
func TestAnalyzeNoRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	trace.Stop()
	f.Close()
	stdout, _, err := runCLI(t, "analyze", path)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if !strings.Contains(string(stdout), "refused:") {
		t.Errorf("the report does not say why:\n%s", stdout)
	}
}

// TestAnalyzeManyDirectory: a directory of traces is read in name order,
// each trace labelled by its file name (these traces have no instance
// log), and each instance's row is what the trace alone says.
func TestAnalyzeManyDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"serial", "waitgroup"} {
		data, err := os.ReadFile(fixtureTrace(t, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name+".trace"), data, 0o600)
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a trace"), 0o600)
	page := filepath.Join(t.TempDir(), "many.html")
	stdout, _, err := runCLI(t, "analyze", "--json", "--html", page, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "2 traces from 2 instances") {
		t.Errorf("--html page: %v, want the aggregate's page", err)
	}
	var many struct {
		Instances []string `json:"instances"`
		Groups    []struct {
			Name      string `json:"name"`
			Instances []struct {
				Instance string  `json:"instance"`
				Requests int     `json:"requests"`
				Mean     float64 `json:"mean_ms"`
			} `json:"instances"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(stdout), &many); err != nil {
		t.Fatal(err)
	}
	if strings.Join(many.Instances, ",") != "serial,waitgroup" || len(many.Groups) != 1 {
		t.Fatalf("instances %v, %d groups: want serial, waitgroup and one group", many.Instances, len(many.Groups))
	}
	for i, name := range []string{"serial", "waitgroup"} {
		alone, _, err := runCLI(t, "analyze", "--json", fixtureTrace(t, name))
		if err != nil {
			t.Fatal(err)
		}
		var one struct {
			Requests struct {
				Count int     `json:"count"`
				Mean  float64 `json:"mean_ms"`
			} `json:"requests"`
		}
		if err := json.Unmarshal([]byte(alone), &one); err != nil {
			t.Fatal(err)
		}
		row := many.Groups[0].Instances[i]
		if row.Instance != name || row.Requests != one.Requests.Count || row.Mean != one.Requests.Mean {
			t.Errorf("row %d: %+v, want %s with the trace's own %d requests, mean %v ms", i, row, name, one.Requests.Count, one.Requests.Mean)
		}
	}
}
