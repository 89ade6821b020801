// Package schedtest holds what the tests of the scheduler analysis and of
// its report share.
package schedtest

import "github.com/google/pprof/profile"

// SyntheticProfile is a CPU profile with known stacks (leaf first) and
// sample counts, at 100 Hz: the scheduler analysis's and its text
// writer's golden tests read it.
func SyntheticProfile() *profile.Profile {
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
