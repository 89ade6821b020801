package render_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// TestSchedGolden prints the scheduler report of a synthetic profile (the
// one internal/sched's golden JSON is made from) and compares it with
// testdata/sched-profile.txt.
func TestSchedGolden(t *testing.T) {
	rep := syntheticSched(t)
	var text bytes.Buffer
	if err := render.WriteSchedText(&text, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sched-profile.txt"), text.Bytes(), *update)
}

// TestWriteSched: the section under analyze's report has its heading and
// the report's text, and is left out when there are no CPU samples.
func TestWriteSched(t *testing.T) {
	rep := syntheticSched(t)
	var section, text bytes.Buffer
	if err := render.WriteSched(&section, rep); err != nil {
		t.Fatal(err)
	}
	if err := render.WriteSchedText(&text, rep); err != nil {
		t.Fatal(err)
	}
	want := "\nscheduler and runtime overhead (from CPU samples):\n" + strings.TrimRight(text.String(), "\n") + "\n"
	if section.String() != want {
		t.Errorf("section:\n%s\nwant:\n%s", section.String(), want)
	}
	for _, s := range []*sched.Report{nil, {}} {
		var b bytes.Buffer
		if err := render.WriteSched(&b, s); err != nil || b.Len() > 0 {
			t.Errorf("WriteSched(%v) = %q, %v; want nothing", s, b.String(), err)
		}
	}
}

func syntheticSched(t *testing.T) *sched.Report {
	t.Helper()
	limit := hostsig.Limit{
		Quota: hostsig.Quota{Limited: true, CPUs: 1.5, Period: 100_000_000}, Path: "/lab",
		Own: hostsig.NoLimit, CPU: hostsig.CgroupV2,
	}
	rep, err := sched.FromProfile(syntheticProfile(), sched.Options{Host: sched.Host{GOMAXPROCS: 8, NumCPU: 8, Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// syntheticProfile (internal/sched's golden_test.go has the same) is a CPU profile with known stacks (leaf first) and
// sample counts, at 100 Hz.
func syntheticProfile() *profile.Profile {
	stacks := []struct {
		n     int64
		funcs []string
	}{
		{50, []string{"crypto/sha256.Sum256", "main.work", "main.handle"}},
		{12, []string{"runtime.gfget", "runtime.newproc1", "runtime.newproc.func1", "runtime.systemstack", "runtime.newproc", "main.dispatch", "main.main"}},
		{9, []string{"runtime.futex", "runtime.futexsleep", "runtime.notesleep", "runtime.mPark", "runtime.stopm", "runtime.findRunnable", "runtime.schedule", "runtime.park_m", "runtime.mcall"}},
		{7, []string{"runtime.runqgrab", "runtime.runqsteal", "runtime.stealWork", "runtime.findRunnable", "runtime.schedule", "runtime.goexit0", "runtime.mcall"}},
		{6, []string{"runtime.gfput", "runtime.gdestroy", "runtime.goexit0", "runtime.mcall"}},
		{5, []string{"runtime.futex", "runtime.futexwakeup", "runtime.notewakeup", "runtime.startm", "runtime.wakep", "runtime.newproc.func1", "runtime.systemstack", "runtime.newproc", "main.dispatch", "main.main"}},
		{6, []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker.func2", "runtime.systemstack", "runtime.gcBgMarkWorker"}},
		{3, []string{"runtime.memclrNoHeapPointers", "runtime.mallocgc", "runtime.newobject", "main.dispatch"}},
		{2, []string{"runtime/pprof.(*profileBuilder).addCPUData", "runtime/pprof.profileWriter"}},
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	fns := map[string]*profile.Location{}
	for _, s := range stacks {
		var locs []*profile.Location
		for _, name := range s.funcs {
			loc := fns[name]
			if loc == nil {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, loc)
				fns[name] = loc
			}
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{s.n, s.n * p.Period}})
	}
	return p
}
