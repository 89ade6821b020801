package sched_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	goldenfile "github.com/latscope/latscope/internal/golden"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
)

var update = flag.Bool("update", false, "rewrite the golden files and the fuzz seed")

// syntheticProfile (internal/render's sched_test.go has the same) is a CPU profile with known stacks (leaf first) and
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

// TestGolden renders a synthetic profile's report as JSON (its text is
// internal/render's sched-profile.txt).
func TestGolden(t *testing.T) {
	limit := hostsig.Limit{
		Quota: hostsig.Quota{Limited: true, CPUs: 1.5, Period: 100_000_000}, Path: "/lab",
		Own: hostsig.NoLimit, CPU: hostsig.CgroupV2,
	}
	rep, err := sched.FromProfile(syntheticProfile(), sched.Options{Host: sched.Host{GOMAXPROCS: 8, NumCPU: 8, Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile.json", append(js, '\n'))
	var buf bytes.Buffer
	if err := syntheticProfile().Write(&buf); err != nil {
		t.Fatal(err)
	}
	seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", buf.Bytes())
	golden(t, filepath.Join("fuzz", "FuzzFromProfile", "synthetic"), []byte(seed))
}

// golden compares got with testdata/name; -update rewrites it. A mismatch
// writes name.got beside it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

// FuzzFromProfile: no profile, however malformed, makes the analysis panic.
func FuzzFromProfile(f *testing.F) {
	var buf bytes.Buffer
	if err := syntheticProfile().Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte("not a profile"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		rep, err := sched.FromProfile(p, sched.Options{})
		if err != nil {
			return
		}
		rep.Findings()
		if _, err := json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
	})
}
