package pipeline

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
)

// finishSched finalises the scheduler analysis, adding a pprof CPU profile
// of the same window when --cpu gives one. A profile whose time window does
// not overlap the trace's is refused; other signs that it comes from
// another window or process are returned as warnings (see checkProfile).
func finishSched(sa *sched.Analyzer, cpuProf string, opts budget.Options, res *budget.Result) (*sched.Report, []string, error) {
	if sa == nil {
		return nil, nil, nil
	}
	rep := sa.Finalize()
	if cpuProf == "" {
		return rep, nil, nil
	}
	f, err := os.Open(cpuProf)
	if err != nil {
		return nil, nil, opterr.Wrap("cpu", fmt.Errorf("%s: %w", cpuProf, err))
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, nil, opterr.Wrap("cpu", fmt.Errorf("%s: not a pprof profile: %w", cpuProf, err))
	}
	warns, err := checkProfile(p, res.Info)
	if err == nil {
		warns = append(warns, checkProfileFuncs(p, res)...)
	}
	if err != nil {
		return nil, nil, opterr.Wrap("cpu", fmt.Errorf("%s: %w", cpuProf, err))
	}
	if err := rep.UseProfile(p, sched.Options{Rules: opts.Rules}); err != nil {
		return nil, nil, opterr.Wrap("cpu", fmt.Errorf("%s: %w", cpuProf, err))
	}
	for i, w := range warns {
		warns[i] = fmt.Sprintf("the CPU profile %s: %s", cpuProf, w)
	}
	return rep, warns, nil
}

// clockTolerance is how far apart the profile's and the trace's starts may
// be read on the same wall clock: runtime/pprof reads it when profiling
// starts, the tracer at its first clock snapshot (a few ms apart when both
// are requested at once, as latscope capture does).
const clockTolerance = 100 * time.Millisecond

// checkProfile compares what a CPU profile says about where it comes from
// with the trace. The evidence that is real:
//
//   - time: runtime/pprof records the wall-clock start (TimeNanos) and
//     length (DurationNanos) of the profile; the trace records its start on
//     the wall clock (clock snapshot) and its length. Windows that do not
//     overlap, or share under a tenth of the shorter one, cannot be of the
//     same run: an error. An overlap under half the trace is a warning.
//   - samples: while a Go process is being CPU-profiled, its execution
//     trace carries the same SIGPROF samples. A trace with no CPU samples
//     beside a profile with many in the same window, or sample rates far
//     apart, means another process (or a profile not of this window): a
//     warning, since sample counts are statistical.
//
// A build ID would be stronger, but a trace carries none. When a clock is
// missing the check is said to be impossible, as a warning.
func checkProfile(p *profile.Profile, info budget.TraceInfo) ([]string, error) {
	var warns []string
	traceDur := time.Duration(info.Duration())
	profDur := time.Duration(p.DurationNanos)
	if p.TimeNanos == 0 || info.StartWall.IsZero() {
		what := "the trace has no wall-clock time (no clock snapshot)"
		if p.TimeNanos == 0 {
			what = "the profile has no start time"
		}
		return []string{"cannot check that the profile is of the trace's window: " + what}, nil
	}
	pStart := time.Unix(0, p.TimeNanos)
	pEnd := pStart.Add(profDur)
	tStart := info.StartWall
	tEnd := tStart.Add(traceDur)
	overlap := time.Duration(min(pEnd.UnixNano(), tEnd.UnixNano()) - max(pStart.UnixNano(), tStart.UnixNano()))
	shorter := min(traceDur, profDur)
	if overlap+clockTolerance <= 0 || shorter > 0 && overlap < shorter/10 {
		return nil, fmt.Errorf("the profile covers %s, the trace %s: not the same window, so the profile is of another run or process (take both at once, e.g. with latscope capture)",
			window(pStart, pEnd), window(tStart, tEnd))
	}
	if traceDur > 0 && overlap < traceDur/2 {
		warns = append(warns, fmt.Sprintf("the profile covers only %.0f%% of the trace's window (profile %s, trace %s)",
			100*max(0, overlap.Seconds())/traceDur.Seconds(), window(pStart, pEnd), window(tStart, tEnd)))
	}
	if overlap > 0 && profDur > 0 && traceDur > 0 {
		profSamples := sampleCount(p)
		inProf := float64(profSamples) * overlap.Seconds() / profDur.Seconds()
		inTrace := float64(info.CPUSamples) * overlap.Seconds() / traceDur.Seconds()
		switch {
		case info.CPUSamples == 0 && inProf >= 10:
			warns = append(warns, fmt.Sprintf("the trace has no CPU samples, yet the profile has %d over the same window: a process being CPU-profiled writes its samples into its trace, so the profile looks like another process's", profSamples))
		case inProf >= 10 && inTrace >= 10 && (inProf > 3*inTrace || inTrace > 3*inProf):
			warns = append(warns, fmt.Sprintf("the profile has %.0f samples over the shared window, the trace %.0f: they should be about equal for one process, so the profile may be another process's", inProf, inTrace))
		}
	}
	return warns, nil
}

// checkProfileFuncs is the third piece of evidence: the program. When the
// trace carries CPU samples (so its stack table holds the stacks the CPU
// was in), the application functions a CPU profile of the same process
// spends its samples in appear in the trace's stacks too. A profile whose
// application functions (package main, or a package path with a dot in its
// first element) are all unknown to the trace is another program's. A
// second process of the same binary is not caught here.
func checkProfileFuncs(p *profile.Profile, res *budget.Result) []string {
	if res.Stacks == nil || res.Info.CPUSamples < 10 {
		return nil
	}
	known := map[string]bool{}
	for id := 0; id < res.Stacks.Len(); id++ {
		for _, f := range res.Stacks.Frames(tracein.StackID(id)) {
			if isAppFunc(f.Func) {
				known[f.Func] = true
			}
		}
	}
	if len(known) == 0 {
		return nil
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "samples" {
			idx = i
		}
	}
	var app, found int64
	example := ""
	for _, s := range p.Sample {
		n := int64(1)
		if idx >= 0 && idx < len(s.Value) {
			n = s.Value[idx]
		}
		hasApp, hit := false, false
		for _, fn := range sched.SampleFuncs(nil, s) {
			if !isAppFunc(fn) {
				continue
			}
			hasApp = true
			if known[fn] {
				hit = true
			} else if example == "" {
				example = fn
			}
		}
		if hasApp {
			app += n
			if hit {
				found += n
			}
		}
	}
	if app >= 10 && found*10 < app {
		return []string{fmt.Sprintf("%d of the profile's %d samples in application code are in functions the trace never saw (e.g. %s): the profile looks like another program's", app-found, app, example)}
	}
	return nil
}

// isAppFunc reports whether a function name is outside the standard
// library: package main, or a package path whose first element has a dot.
func isAppFunc(fn string) bool {
	if strings.HasPrefix(fn, "main.") {
		return true
	}
	first, _, _ := strings.Cut(fn, "/")
	if !strings.Contains(fn, "/") {
		return false // "fmt.Println", "runtime.mcall": a standard package
	}
	return strings.Contains(first, ".")
}

// sampleCount is the number of samples in p (the "samples" value, or one
// per sample).
func sampleCount(p *profile.Profile) int64 {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "samples" {
			idx = i
			break
		}
	}
	var n int64
	for _, s := range p.Sample {
		if idx >= 0 && idx < len(s.Value) {
			n += s.Value[idx]
		} else {
			n++
		}
	}
	return n
}

// window formats a wall-clock interval in UTC.
func window(a, b time.Time) string {
	return fmt.Sprintf("%s–%s UTC", a.UTC().Format("2006-01-02 15:04:05.0"), b.UTC().Format("15:04:05.0"))
}
