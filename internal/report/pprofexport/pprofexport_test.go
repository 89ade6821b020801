package pprofexport_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/report/pprofexport"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// want are the totals each export must have, from the result's own sums.
type want struct{ wall, offcpu, critical int64 }

func wantTotals(t *testing.T, res *budget.Result) want {
	t.Helper()
	var w want
	for _, g := range res.Groups {
		var stackWait, stackCrit, termWait, termCrit, lat int64
		for _, s := range g.StackWaits {
			stackWait += s.Wait
			stackCrit += s.Critical
		}
		for _, s := range g.Terms {
			termWait += s.Wait
			termCrit += s.Critical
		}
		for _, l := range g.Latencies {
			lat += l
		}
		if stackWait != termWait || stackCrit != termCrit {
			t.Fatalf("%s: Σ StackWaits (wait %d, critical %d) ≠ Σ Terms (wait %d, critical %d)", g.Name, stackWait, stackCrit, termWait, termCrit)
		}
		crit := stackCrit + g.Running.Critical + g.Runnable.Critical + g.Unknown
		if g.PathMismatch == 0 && crit != lat {
			t.Fatalf("%s: critical %d ≠ Σ latency %d with no path mismatch", g.Name, crit, lat)
		}
		w.wall += stackWait + g.Running.Wait + g.Runnable.Wait
		w.offcpu += stackWait
		w.critical += crit
	}
	return w
}

func TestExportTotals(t *testing.T) {
	gotool := goTool(t)
	for _, tc := range []struct {
		name string
		cfg  demotrace.Config
	}{
		{"serial with CPU samples", demotrace.Config{Scenario: "serial", CPUProfile: true}},
		{"waitgroup (forks)", demotrace.Config{Scenario: "waitgroup"}},
		{"notasks (inferred http)", demotrace.Config{Scenario: "notasks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fixture.Record(t, tc.cfg)
			res := fixture.Analyze(t, rec.Path, budget.DefaultOptions)
			if len(res.Groups) == 0 {
				t.Fatal("no request groups")
			}
			w := wantTotals(t, res)
			dir := t.TempDir()
			paths, err := pprofexport.WriteDir(dir, res, pprofexport.DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			totals := map[string]int64{"wall.pb.gz": w.wall, "offcpu.pb.gz": w.offcpu, "critical.pb.gz": w.critical}
			for _, path := range paths {
				name := filepath.Base(path)
				p := parse(t, path)
				if got := sum(p); got != totals[name] {
					t.Errorf("%s: Σ samples = %d ns, want %d", name, got, totals[name])
				}
				if got := pprofTop(t, gotool, path); got != totals[name] {
					t.Errorf("%s: go tool pprof -top total = %d ns, want %d", name, got, totals[name])
				}
				checkLabels(t, name, p, res)
			}
			checkJSON(t, res, w)
			if tc.cfg.CPUProfile {
				checkSpread(t, res, parse(t, filepath.Join(dir, "wall.pb.gz")))
			}
		})
	}
}

// checkJSON compares the totals with the report's per-request numbers.
func checkJSON(t *testing.T, res *budget.Result, w want) {
	t.Helper()
	rep, err := render.Build(res, render.Inputs{CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	var offcpu, wall, crit float64
	tol := 0.0
	for _, g := range rep.Groups {
		n := float64(g.Requests.Count)
		for _, tm := range g.Terms {
			offcpu += tm.Wait.Ms() * n
			crit += tm.Critical.Ms() * n
			tol += n * 0.0005 * 2
		}
		wall += (g.CPU.Running.Ms() + g.CPU.Runnable.Ms()) * n
		crit += (g.CPU.CriticalRunning.Ms() + g.CPU.CriticalRunnable.Ms() + g.Coverage.Unknown.Ms()) * n
		tol += n * 0.0005 * 5
	}
	wall += offcpu
	for _, c := range []struct {
		name      string
		got, json float64
	}{{"offcpu", float64(w.offcpu) / 1e6, offcpu}, {"wall", float64(w.wall) / 1e6, wall}, {"critical", float64(w.critical) / 1e6, crit}} {
		if math.Abs(c.got-c.json) > tol {
			t.Errorf("%s: profile total %.3f ms, JSON per-request × count %.3f ms (tolerance %.3f ms of rounding)", c.name, c.got, c.json, tol)
		}
	}
}

// checkLabels checks every sample names its request type, kind and count.
func checkLabels(t *testing.T, name string, p *profile.Profile, res *budget.Result) {
	t.Helper()
	counts := map[string]int64{}
	for _, g := range res.Groups {
		counts[g.Name] = int64(g.Count)
	}
	frames := 0
	for _, s := range p.Sample {
		req, kind := s.Label["request"], s.Label["kind"]
		if len(req) != 1 || len(kind) != 1 {
			t.Fatalf("%s: sample without request/kind labels: %v", name, s.Label)
		}
		if n := s.NumLabel["requests"]; len(n) != 1 || n[0] != counts[req[0]] {
			t.Errorf("%s: requests label %v, want %d", name, n, counts[req[0]])
		}
		if len(s.Label["frame"]) == 1 {
			frames++
		}
		if len(s.Location) == 0 {
			t.Errorf("%s: sample without a stack", name)
		}
	}
	if name == "offcpu.pb.gz" && frames == 0 {
		t.Errorf("%s: no sample carries an application frame label", name)
	}
}

// checkSpread checks running time follows the CPU samples' stacks.
func checkSpread(t *testing.T, res *budget.Result, p *profile.Profile) {
	t.Helper()
	var running, pseudo int64
	for _, s := range p.Sample {
		if s.Label["kind"][0] != "running" {
			continue
		}
		running += s.Value[0]
		if s.Location[0].Line[0].Function.Name == "[running]" {
			pseudo += s.Value[0]
		}
	}
	if want := res.Groups[0].Running.Wait; running != want {
		t.Errorf("running = %d ns, want %d", running, want)
	}
	if len(res.Groups[0].CPUStacks) > 0 && pseudo == running {
		t.Errorf("the trace has %d CPU sample stacks but all running time is on the [running] pseudo-frame", len(res.Groups[0].CPUStacks))
	}
}

func TestExportTask(t *testing.T) {
	res := fixture.Analyze(t, fixture.Scenario(t, "serial").Path, budget.DefaultOptions)
	opts := pprofexport.DefaultOptions
	opts.Task = "request"
	if _, err := pprofexport.Wall(res, opts); err != nil {
		t.Errorf("--task request: %v", err)
	}
	opts.Task = "nosuch"
	if _, err := pprofexport.Critical(res, opts); err == nil {
		t.Error("--task nosuch: no error")
	}
	if _, err := pprofexport.OffCPU(nil, pprofexport.DefaultOptions); err == nil {
		t.Error("nil result: no error")
	}
}

func parse(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func sum(p *profile.Profile) int64 {
	var s int64
	for _, x := range p.Sample {
		s += x.Value[0]
	}
	return s
}

var topTotal = regexp.MustCompile(`of (\d+)ns total`)

// pprofTop runs `go tool pprof -top` on a file and returns its total.
func pprofTop(t *testing.T, gotool, path string) int64 {
	t.Helper()
	out, err := exec.Command(gotool, "tool", "pprof", "-top", "-unit=ns", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", path, err, out)
	}
	m := topTotal.FindSubmatch(out)
	if m == nil {
		t.Fatalf("go tool pprof -top %s: no total in\n%s", path, out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := "/usr/local/go/bin/go"; fileExists(p) {
		return p
	}
	t.Skip("SKIP: no go tool on PATH or at /usr/local/go/bin/go to run `go tool pprof -top`")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
