package sched_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
)

// recording is a trace with CPU samples and the CPU profile of the same
// window.
type recording struct {
	trace, profile []byte
	err            error
}

var (
	recMu      sync.Mutex
	recordings = map[string]*recording{}
)

// The kept burst recordings (testdata/burst-MODE.trace.gz and .pprof) are
// the lab's burst.Service run in its recorder's process with GOMAXPROCS
// 32, as `latscope-lab burst-serve` runs it, traced with the CPU profiler
// on: spawn for burstWindow, fixed (a steady pool makes a small trace)
// for 4 × burstWindow, batches every burstEvery. The recorder is in the
// lab module: LATSCOPE_RETRACE=1 go test -run TestRecordSchedTraces
// ./lab/burst/ records them again.
const (
	burstWindow = 600 * time.Millisecond
	burstEvery  = 100 * time.Millisecond // burst.DefaultConfig.Every
)

// window is mode's traced window.
func window(mode string) time.Duration {
	if mode == "fixed" {
		return 4 * burstWindow
	}
	return burstWindow
}

// gunzip reads a gzipped file whole.
func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// recordBurst returns the kept recording of the burst service in mode
// ("spawn" or "fixed").
func recordBurst(t *testing.T, mode string) *recording {
	t.Helper()
	recMu.Lock()
	defer recMu.Unlock()
	if r := recordings[mode]; r != nil {
		return r
	}
	r := &recording{}
	name := filepath.Join("testdata", "burst-"+mode)
	if r.trace, r.err = gunzip(name + ".trace.gz"); r.err == nil {
		r.profile, r.err = os.ReadFile(name + ".pprof")
	}
	recordings[mode] = r
	if r.err != nil {
		t.Fatalf("%v: record it with LATSCOPE_RETRACE=1 go test -run TestRecordSchedTraces ./lab/burst/", r.err)
	}
	return r
}

// runSched analyses a trace with the scheduler analysis alone, through the
// read loop every command uses.
func runSched(name string, data []byte, opts sched.Options) (*sched.Report, error) {
	var sa *sched.Analyzer
	mk := func(st *tracein.Stacks, _ frame.Rules) analysis.Consumer {
		sa = sched.New(opts, st)
		return sa
	}
	if _, err := analysis.Run(context.Background(), name, bytes.NewReader(data), analysis.Options{}, mk); err != nil {
		return nil, err
	}
	return sa.Finalize(), nil
}

func analyze(t *testing.T, name string, data []byte, opts sched.Options) *sched.Report {
	t.Helper()
	rep, err := runSched(name, data, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep)
	return rep
}

// checkReport asserts the invariants of every report.
func checkReport(t *testing.T, rep *sched.Report) {
	t.Helper()
	c := &rep.CPU
	var sum int64
	var shares float64
	for _, s := range c.Classes {
		sum += s.Weight
		shares += s.Share
		if s.Weight < 0 || s.Share < 0 {
			t.Errorf("negative class %+v", s)
		}
	}
	if sum != c.Total || c.Total > 0 && math.Abs(shares-1) > 1e-9 {
		t.Errorf("classes sum to %d (shares %.6f), total %d", sum, shares, c.Total)
	}
	var groups int64
	for _, g := range c.Groups {
		groups += g.Weight
	}
	if groups != c.Total-c.Classes[sched.ClassOther].Weight {
		t.Errorf("groups sum to %d, want the non-other weight %d", groups, c.Total-c.Classes[sched.ClassOther].Weight)
	}
	if tr := rep.Trace; tr != nil {
		if tr.Wait.Count > tr.Wakeups+tr.Creations || tr.PollWakeups > tr.Wakeups || tr.Bursts.InLarge > tr.Wakeups+tr.Creations {
			t.Errorf("trace counts inconsistent: %+v", tr)
		}
		if tr.Duration <= 0 {
			t.Errorf("trace duration %v", tr.Duration)
		}
	}
}

func findings(rep *sched.Report) map[sched.FindingKind]string {
	out := map[sched.FindingKind]string{}
	for _, f := range rep.Findings() {
		out[f.Kind] = f.Error()
	}
	return out
}

// TestBurstSpawnFinding: a goroutine per event, 20,000 events every 100 ms
// at GOMAXPROCS 32, is the seed's shape; the finding must fire and name the
// dispatcher.
func TestBurstSpawnFinding(t *testing.T) {
	t.Parallel()
	rec := recordBurst(t, "spawn")
	noLimit := hostsig.Limit{}
	rep := analyze(t, "spawn", rec.trace, sched.Options{Host: sched.Host{GOMAXPROCS: 32, NumCPU: 2, Limit: &noLimit}})
	if rep.CPU.Samples < sched.DefaultThresholds.MinSamples {
		t.Fatalf("only %d CPU samples", rep.CPU.Samples)
	}
	fs := findings(rep)
	text, ok := fs[sched.FindSchedOverhead]
	if !ok {
		t.Fatalf("no scheduler-overhead finding at %.1f %% scheduler; findings %v", 100*rep.CPU.Share(sched.ClassScheduler), fs)
	}
	if !strings.Contains(text, "burst.(*Service).Deliver") || !strings.Contains(text, "bounded worker pool") {
		t.Errorf("finding does not name the dispatcher and the options: %s", text)
	}
	if _, ok := fs[sched.FindProcsAbove]; !ok {
		t.Errorf("GOMAXPROCS 32 on 2 CPUs: no %v finding; findings %v", sched.FindProcsAbove, fs)
	}
	tr := rep.Trace
	if tr.PsSeen <= runtime.NumCPU() || tr.Creations == 0 || tr.Bursts.Large == 0 || tr.Wait.Count == 0 {
		t.Errorf("trace: %d Ps, %d creations, %d large bursts, %d waits; want more Ps than CPUs and bursts of creations",
			tr.PsSeen, tr.Creations, tr.Bursts.Large, tr.Wait.Count)
	}
	if len(tr.Causes) == 0 {
		t.Fatal("no causes of the bursts")
	}
	top := tr.Causes[0]
	if top.Kind != sched.CauseCreate || !strings.HasSuffix(top.Actor, "lab/burst.(*Service).Deliver") || !strings.HasSuffix(top.Target, "lab/burst.(*Service).handle") {
		t.Errorf("top cause %+v: want Deliver creating handle", top)
	}
	var groupSpawn float64
	for _, g := range rep.CPU.Groups {
		if g.Group == sched.GroupSpawn {
			groupSpawn = g.Share
		}
	}
	if groupSpawn == 0 {
		t.Errorf("no goroutine create/exit CPU in a goroutine-per-event service: %+v", rep.CPU.Groups)
	}
	t.Logf("scheduler %.1f %% ± %.1f of %d samples", 100*rep.CPU.Share(sched.ClassScheduler), 100*rep.CPU.Margin(sched.ClassScheduler), rep.CPU.Samples)
}

// TestBurstSpawnProfile: the pprof CPU profile of the same window agrees.
func TestBurstSpawnProfile(t *testing.T) {
	t.Parallel()
	rec := recordBurst(t, "spawn")
	p, err := profile.ParseData(rec.profile)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sched.FromProfile(p, sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep)
	if rep.CPU.Source != "profile" || rep.CPU.Unit != "ns" || rep.Trace != nil {
		t.Errorf("profile report: source %q unit %q trace %v", rep.CPU.Source, rep.CPU.Unit, rep.Trace)
	}
	if want := rep.CPU.Samples * p.Period; rep.CPU.Total != want {
		t.Errorf("total %d ns, want samples × period = %d", rep.CPU.Total, want)
	}
	if _, ok := findings(rep)[sched.FindSchedOverhead]; !ok {
		t.Errorf("profile: no scheduler-overhead finding at %.1f %% of %d samples", 100*rep.CPU.Share(sched.ClassScheduler), rep.CPU.Samples)
	}
}

// TestBurstFixedNoFinding: the same batches through two steady workers.
func TestBurstFixedNoFinding(t *testing.T) {
	t.Parallel()
	rec := recordBurst(t, "fixed")
	rep := analyze(t, "fixed", rec.trace, sched.Options{})
	if rep.CPU.Samples < sched.DefaultThresholds.MinSamples {
		t.Fatalf("only %d CPU samples: the absence of a finding would mean nothing", rep.CPU.Samples)
	}
	if text, ok := findings(rep)[sched.FindSchedOverhead]; ok {
		t.Errorf("fixed pool: unexpected finding: %s", text)
	}
	// Spawning makes one large burst per batch; a steady pool makes none
	// per batch, though a scheduling hiccup (two workers handed items in
	// quick succession) can now and then cluster 16 wake-ups: allow a
	// quarter of the batches, far below spawn's one per batch.
	batches := int64(window("fixed") / burstEvery)
	if tr := rep.Trace; tr.Creations > 100 || 4*tr.Bursts.Large > batches {
		t.Errorf("fixed pool: %d creations, %d large bursts in %d batches; want a steady pool", tr.Creations, tr.Bursts.Large, batches)
	}
}

// TestUseProfile replaces a trace's CPU shares with a profile's.
func TestUseProfile(t *testing.T) {
	t.Parallel()
	rep := analyze(t, "fixed", recordBurst(t, "fixed").trace, sched.Options{})
	p, err := profile.ParseData(recordBurst(t, "spawn").profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.UseProfile(p, sched.Options{}); err != nil {
		t.Fatal(err)
	}
	if rep.CPU.Source != "profile" || rep.Trace == nil {
		t.Errorf("after UseProfile: source %q, trace kept %v", rep.CPU.Source, rep.Trace != nil)
	}
	if _, ok := findings(rep)[sched.FindSchedOverhead]; !ok {
		t.Error("the spawn profile's shares did not carry the finding")
	}
}

// TestDemoModesNoFinding: the seed experiment's service (CPU, upstream HTTP, a
// database round trip, a mutex) is not scheduler-bound in any mode.
func TestDemoModesNoFinding(t *testing.T) {
	t.Parallel()
	for _, scenario := range []string{"serial", "waitgroup"} {
		t.Run(scenario, func(t *testing.T) {
			rec := fixture.Record(t, demotrace.Config{
				Scenario: scenario, CPUProfile: true, Requests: 400,
				Upstream: 10 * time.Millisecond, DB: 5 * time.Millisecond,
			})
			data, err := os.ReadFile(rec.Path)
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze(t, scenario, data, sched.Options{})
			if rep.CPU.Samples < sched.DefaultThresholds.MinSamples {
				t.Fatalf("only %d CPU samples: the absence of a finding would mean nothing", rep.CPU.Samples)
			}
			if text, ok := findings(rep)[sched.FindSchedOverhead]; ok {
				t.Errorf("unexpected finding: %s", text)
			}
			t.Logf("scheduler %.1f %% of %d samples", 100*rep.CPU.Share(sched.ClassScheduler), rep.CPU.Samples)
		})
	}
}

// TestNoSamples: a trace recorded without the CPU profiler says so instead
// of reporting a 0 % share.
func TestNoSamples(t *testing.T) {
	var buf bytes.Buffer
	if _, err := demotrace.Record(t.Context(), &buf, demotrace.Config{Scenario: "serial", Requests: 10,
		Upstream: 5 * time.Millisecond, DB: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, "serial", buf.Bytes(), sched.Options{})
	fs := findings(rep)
	if _, ok := fs[sched.FindNoSamples]; !ok || len(fs) != 1 {
		t.Errorf("findings %v, want only %v", fs, sched.FindNoSamples)
	}
}

// TestTruncated: a cut trace is an error naming the input and offset.
func TestTruncated(t *testing.T) {
	data := recordBurst(t, "fixed").trace
	_, err := runSched("cut.trace", data[:len(data)/2], sched.Options{})
	if err == nil || !strings.Contains(err.Error(), "cut.trace: offset") {
		t.Errorf("error %v, want one naming cut.trace and the offset", err)
	}
}

// TestNotCPUProfile: a heap profile is refused with the reason.
func TestNotCPUProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.FromProfile(p, sched.Options{}); err == nil || !strings.Contains(err.Error(), "not a CPU profile") {
		t.Errorf("heap profile: %v", err)
	}
}

// TestReportJSON: a report of a real trace marshals to JSON whose bursts,
// histograms and findings read back as the report says.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	rep := analyze(t, "spawn", recordBurst(t, "spawn").trace, sched.Options{})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, k := range []string{"cpu", "trace", "findings"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if !strings.Contains(string(b), rep.Trace.Causes[0].Kind.String()) {
		t.Errorf("JSON lacks the top cause's kind %q", rep.Trace.Causes[0].Kind)
	}
}
