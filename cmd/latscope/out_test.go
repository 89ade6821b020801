package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/cli/clitest"
	"github.com/latscope/latscope/internal/tier"
)

// copyFixture copies a fixture trace into dir, so tests may point outputs
// at it.
func copyFixture(t *testing.T, dir, scenario string) string {
	t.Helper()
	b, err := os.ReadFile(fixtureTrace(t, scenario))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, scenario+".trace")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// listDir lists dir.
var listDir = clitest.ListDir

// TestOutputPaths: analyze's outputs replace only regular files, never the
// input, and are written all or nothing.
func TestOutputPaths(t *testing.T) {
	dir := t.TempDir()
	tr := copyFixture(t, dir, "serial")
	trace, _ := os.ReadFile(tr)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	os.Symlink(filepath.Join(dir, "elsewhere.html"), link)
	hard := filepath.Join(dir, "hard.trace")
	os.Link(tr, hard)
	old := filepath.Join(dir, "old.html")
	os.WriteFile(old, []byte("old report"), 0o644)
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, []byte("a file"), 0o644)
	profDir := filepath.Join(dir, "prof")
	os.Mkdir(profDir, 0o755)
	os.Symlink("/nonexistent", filepath.Join(profDir, "offcpu.pb.gz"))
	before := listDir(t, dir)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"html is a FIFO", []string{"--html", fifo, tr}, "refusing to replace " + fifo + ": it is a FIFO, not a regular file"},
		{"html is a symlink", []string{"--html", link, tr}, "it is a symbolic link"},
		{"html is a directory", []string{"--html", dir, tr}, "it is a directory"},
		{"html is the input", []string{"--html", tr, tr}, "refusing to write " + tr + ": it is the input"},
		{"html is a link to the input", []string{"--html", hard, tr}, "it is the input"},
		{"pprof under a file, html not written", []string{"--html", old, "--pprof", filepath.Join(notDir, "sub"), tr}, "not a directory"},
		{"one pprof target a symlink, html not written", []string{"--html", old, "--pprof", profDir, tr}, "offcpu.pb.gz: it is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"analyze"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			oneLine(t, err.Error())
			if got := listDir(t, dir); got != before {
				t.Errorf("directory changed: %q, was %q", got, before)
			}
			if b, _ := os.ReadFile(old); string(b) != "old report" {
				t.Errorf("old.html = %q", b)
			}
			if b, _ := os.ReadFile(tr); !bytes.Equal(b, trace) {
				t.Error("the input trace changed")
			}
			if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
				t.Error("the FIFO was replaced")
			}
			if es, _ := os.ReadDir(profDir); len(es) != 1 {
				t.Errorf("--pprof dir holds %v", es)
			}
		})
	}
	t.Run("both written", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new", "prof")
		if _, _, err := runCLI(t, "analyze", "--html", old, "--pprof", out, tr); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(old); !bytes.Contains(b, []byte("<html")) {
			t.Error("old.html was not replaced by the report")
		}
		if got := listDir(t, out); got != "critical.pb.gz offcpu.pb.gz wall.pb.gz" {
			t.Errorf("--pprof wrote %q", got)
		}
	})
}

// TestInputChecks: a directory as a trace is refused in one line; the JVM
// flags are refused on a Go trace.
func TestInputChecks(t *testing.T) {
	dir := t.TempDir()
	serial := fixtureTrace(t, "serial")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"analyze", dir}, dir + " is a directory, not a trace file"},
		{[]string{"compare", serial, dir}, dir + " is a directory, not a trace file"},
		{[]string{"analyze", "--cpu", dir, serial}, "--cpu: " + dir + " is a directory"},
		{[]string{"dbwait", "--pglog", serial, dir}, "dbwait: " + dir + " is a directory, not a trace file"},
		{[]string{"analyze", "--handler", "A.b", serial}, "--handler apply to JVM recordings (.jfr) only; " + serial + " is read as a Go execution trace"},
		{[]string{"analyze", "--requests", "5", "--requests-from", "x", serial}, "--requests, --requests-from apply to JVM recordings (.jfr) only"},
		{[]string{"analyze", "--cpu", serial, "x.jfr"}, "--cpu applies to Go execution traces only"},
		{[]string{"analyze", "--partial", "x.jfr"}, "--partial applies to Go execution traces only"},
	}
	for _, c := range cases {
		// named without the temporary directory, so that the test's output is
		// the same in every run
		t.Run(strings.ReplaceAll(strings.Join(c.args, " "), dir, "DIR"), func(t *testing.T) {
			code, stderr := runExit(t, c.args...)
			if msg := oneLine(t, stderr); code != 2 || !strings.Contains(msg, c.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, msg, c.want)
			}
		})
	}
}

// TestCPUProfileWindow: a --cpu profile whose time window is not the
// trace's is refused; one whose sample count does not fit the trace is
// flagged (a profile of another process was accepted
// without a word).
func TestCPUProfileWindow(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	res, err := analyzeFile(context.Background(), serial, budget.DefaultOptions, false)
	if err != nil {
		t.Fatal(err)
	}
	info := res.Info
	if info.StartWall.IsZero() || info.CPUSamples < 10 {
		t.Fatalf("the fixture has no wall clock or too few CPU samples (%d)", info.CPUSamples)
	}
	dur := time.Duration(info.Duration())
	dir := t.TempDir()
	write := func(name string, start time.Time, d time.Duration, samples int64, funcs ...string) string {
		if len(funcs) == 0 {
			funcs = []string{"github.com/latscope/latscope/lab/demotrace.cpuWork"} // in the trace's stacks
		}
		fn := &profile.Function{ID: 1, Name: funcs[0]}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		p := &profile.Profile{
			SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:        10_000_000,
			TimeNanos:     start.UnixNano(),
			DurationNanos: int64(d),
			Function:      []*profile.Function{fn},
			Location:      []*profile.Location{loc},
			Sample:        []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{samples, samples * 10_000_000}}},
		}
		path := filepath.Join(dir, name)
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, b.Bytes(), 0o644)
		return path
	}
	n := int64(info.CPUSamples)
	same := write("same.pprof", info.StartWall, dur, n)
	earlier := write("earlier.pprof", info.StartWall.Add(-time.Hour), dur, n)
	tenfold := write("tenfold.pprof", info.StartWall, dur, 10*n)
	half := write("half.pprof", info.StartWall.Add(dur*3/4), dur, n)
	sliver := write("sliver.pprof", info.StartWall.Add(dur*19/20), dur, n)
	other := write("other.pprof", info.StartWall, dur, n, "example.com/other/svc.work")

	for _, prof := range []string{earlier, sliver} {
		_, _, err = runCLI(t, "analyze", "--cpu", prof, serial)
		if err == nil || !strings.Contains(err.Error(), "not the same window") {
			t.Errorf("%s: err = %v", filepath.Base(prof), err)
		}
	}
	for _, c := range []struct {
		prof, want string
	}{
		{same, ""},
		{tenfold, "they should be about equal for one process"},
		{half, "the profile covers only 25% of the trace's window"},
		{other, "in functions the trace never saw (e.g. example.com/other/svc.work): the profile looks like another program's"},
	} {
		stdout, _, err := runCLI(t, "analyze", "--json", "--cpu", c.prof, serial)
		if err != nil {
			t.Errorf("%s: %v", c.prof, err)
			continue
		}
		has := strings.Contains(stdout, "cpu-profile-mismatch")
		if c.want == "" && has || c.want != "" && !strings.Contains(stdout, c.want) {
			t.Errorf("%s: want %q in the findings; JSON has cpu-profile-mismatch=%v", filepath.Base(c.prof), c.want, has)
		}
	}
}

// TestDemoTraceWriteError: a failed write of the trace (a full disk) makes
// demo-trace fail and leaves no file.
func TestDemoTraceWriteError(t *testing.T) {
	tier.Timing(t)
	if testing.Short() {
		t.Skip("-short: records a trace")
	}
	defer func(f func(io.Writer) io.Writer) { demoTraceOutput = f }(demoTraceOutput)
	demoTraceOutput = func(w io.Writer) io.Writer { return &failingWriter{w: w, left: 2000} }
	dir := t.TempDir()
	out := filepath.Join(dir, "demo.trace")
	_, _, err := runCLI(t, "demo-trace", "--requests", "4", "-o", out)
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "demo-trace: ") {
		t.Errorf("err = %v, want ENOSPC", err)
	}
	if got := listDir(t, dir); got != "" {
		t.Errorf("a failed demo-trace left %q", got)
	}
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	if _, _, err := runCLI(t, "demo-trace", "--requests", "4", "-o", fifo); err == nil || !strings.Contains(err.Error(), "it is a FIFO") {
		t.Errorf("-o FIFO: err = %v", err)
	}
}

// failingWriter passes left bytes to w, then fails as a full disk does.
type failingWriter struct {
	w    io.Writer
	left int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n, _ := f.w.Write(p[:f.left])
		f.left = 0
		return n, syscall.ENOSPC
	}
	f.left -= len(p)
	return f.w.Write(p)
}

// TestSameSections: analyze's text and its HTML report of the same trace
// show the same sections, the scheduler's included, and the same findings.
func TestSameSections(t *testing.T) {
	tr := fixtureTrace(t, "serial")
	page := filepath.Join(t.TempDir(), "r.html")
	stdout, _, err := runCLI(t, "analyze", "--html", page, tr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, pair := range [][2]string{
		{"per request, ms", "Latency budget"},
		{"critical path of the median request", "Critical path"},
		{"scheduler and runtime overhead", "Scheduler and runtime overhead"},
	} {
		if !strings.Contains(stdout, pair[0]) || !strings.Contains(html, pair[1]) {
			t.Errorf("text has %q: %v; HTML has %q: %v", pair[0], strings.Contains(stdout, pair[0]), pair[1], strings.Contains(html, pair[1]))
		}
	}
}
