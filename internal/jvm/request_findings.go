package jvm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
)

// finalizeRequests is Finalize in request mode: the recording has
// latscope.Request events.
func (a *Analyzer) finalizeRequests() *budget.Result {
	// a recording begun past WarmupGap after the JVM: slow first requests
	// are the recorder's own start-up, not the JVM's warm-up
	past := !a.env.jvmStart.IsZero() && a.rec.Start().Sub(a.env.jvmStart) >= WarmupGap
	a.req.startupGap = a.rec.Start().Sub(a.env.jvmStart)
	o := a.req.finalize(a.opts.Predictions, a.rec.Start().UnixNano(), past)
	res := &budget.Result{Info: a.info(), Terms: o.terms, Stacks: tracein.NewStacks(), Groups: o.groups}
	res.Outside.ByKind = o.outside
	a.HandOffs = o.handOffs
	period := a.samplePeriod()
	if period > 0 {
		a.RequestCPU = float64(o.samplesIn(res.Groups)) * period.Seconds()
	}
	if o.cpuExact {
		// the coverage line's independent CPU: the CPU in no term (a
		// hold's CPU is a term of its own)
		a.RequestCPU, a.RequestCPUExact = float64(max(0, o.cpu-o.heldCPU))/1e9, true
		a.HeldCPU = o.heldByGroup
	}
	res.Warnings = a.requestFindings(res, o, period)
	return res
}

func (o *reqOutcome) samplesIn(gs []*budget.Group) int {
	n := 0
	for _, g := range gs {
		n += g.CPUSamples
	}
	return n
}

// samplePeriod is jdk.ExecutionSample's period in the recording (the
// shortest, if several recordings ran), or 0 when unknown.
func (a *Analyzer) samplePeriod() time.Duration {
	return a.env.settings.Shortest("jdk.ExecutionSample", "period")
}

func (a *Analyzer) requestFindings(res *budget.Result, o *reqOutcome, period time.Duration) []error {
	var out []error
	add := func(f *budget.Finding) {
		if f != nil {
			out = append(out, f)
		}
	}
	n, before := 0, 0
	var routes []string
	for _, g := range res.Groups {
		n += g.Count
		before += g.ExcludedBefore
		routes = append(routes, g.Name)
	}
	add(&budget.Finding{Kind: budget.FindInferred, Text: fmt.Sprintf(
		"request mode: %d requests (%s) from the recording's latscope.Request events (the Java library, java/): latency and percentiles are the events' durations, and %d hand-offs to other threads (latscope.TaskSubmit → TaskRun → TaskWait) are followed by the critical path, so time a request's threads overlapped counts once (docs/jfr.md)",
		n, strings.Join(routes, ", "), o.tasks)})
	add(a.unseenFinding(o))
	if o.nested > 0 {
		add(&budget.Finding{Kind: budget.FindInferred, Text: fmt.Sprintf(
			"%d latscope.Request events began inside another request on the same thread (two filters, or Requests.begin inside a filtered request): they are part of the outer request, not requests of their own", o.nested)})
	}
	add(a.requestCPUFinding(res, o, period))
	add(a.givenFinding(n))
	before -= o.startup // counted in ExcludedBefore, said by their own finding
	if before > 0 {
		add(&budget.Finding{Kind: budget.FindCutByWindow, Text: fmt.Sprintf(
			"%d requests began before the recording and are excluded (their waits before it are not recorded); requests still running when it stopped have no event and are not counted", before)})
	}
	add(a.thresholdFinding())
	add(a.hiddenFinding(res, o))
	add(handOffFinding(o.handOffs))
	add(a.warmupFinding())
	add(a.jitFinding())
	for _, f := range a.req.findings {
		add(f)
	}
	add(a.saturationFinding())
	for _, f := range noMatch(res) {
		add(f)
	}
	return out
}

// jvmWording is what the findings budget writes for both runtimes say for
// a JVM recording.
var jvmWording = budget.Wording{
	Input:        "the recording",
	WarmupCauses: "class loading, JIT compilation",
	Restart:      "start it after warm-up with jcmd PID JFR.start (docs/jfr.md)",
	TermsOf:      " of the recording",
	ClosestLead:  "; closest frames: ",
}

// noMatch refuses predictions that name no term of the recording (the CLI
// makes them an error). A prediction that names a term of one route only
// is simulated on every route: it changes nothing on the others.
func noMatch(res *budget.Result) []*budget.Finding {
	if len(res.Groups) == 0 {
		return nil
	}
	var names []string
	for _, t := range res.Terms {
		names = append(names, t.Path...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var out []*budget.Finding
	for _, p := range res.Groups[0].Predictions {
		if p.Matched {
			continue
		}
		out = append(out, &budget.Finding{Kind: budget.FindNoMatch, Refuse: true, Text: jvmWording.NoMatchText(p.Spec, budget.Closest(p.A+" "+p.B, names, 3))})
	}
	return out
}

// unseenFinding states what the critical path cannot see.
func (a *Analyzer) unseenFinding(o *reqOutcome) *budget.Finding {
	text := "the critical path follows only hand-offs the library marks (Tasks.wrap, Tasks.supplyAsync/runAsync); " +
		"work handed over otherwise (an unwrapped executor, a queue of the application's own, CompletableFuture.supplyAsync) shows as the waiting thread's park, and the other thread's waits are outside any request. " +
		"Time in no recorded wait (on CPU, waiting for a CPU, or in a wait shorter than its JFR threshold) is the unknown row"
	if o.unwrapped > 0 {
		text += fmt.Sprintf("; %d waits (%.1f ms in all) on request threads are under Future.get, join or CountDownLatch.await without a latscope.TaskWait: hand-offs the library did not see (wrap that executor with io.latscope.Tasks.wrap)",
			o.unwrapped, float64(o.unwrappedWait)/1e6)
	}
	return &budget.Finding{Kind: budget.FindUnexplained, Text: text}
}

// requestCPUFinding says where the independent CPU of the coverage line
// comes from: the library's exact thread CPU, or else the execution
// samples, which miss CPU in native code and intrinsics; it then bounds
// how low they may be by the JVM's own CPU (jdk.CPULoad).
func (a *Analyzer) requestCPUFinding(res *budget.Result, o *reqOutcome, period time.Duration) *budget.Finding {
	in := o.samplesIn(res.Groups)
	n := 0
	for _, g := range res.Groups {
		n += g.Count
	}
	nn := float64(max(n, 1))
	sampled := float64(in) * float64(period) / nn / 1e6
	if o.cpuExact {
		cpu := o.cpu
		var crit int64
		for _, g := range res.Groups {
			crit += g.Running.Critical
		}
		text := fmt.Sprintf("request CPU is exact: the Java library measured each request's and each task's thread CPU time (ThreadMXBean, the events' cpuTime): %.2f ms per request",
			float64(cpu)/nn/1e6)
		if o.heldCPU > 0 {
			text += fmt.Sprintf(", %.2f ms of it holding a lock or pooled resource the library marks (io.latscope.Holds: the hold's term, \"%s\")", float64(o.heldCPU)/nn/1e6, HoldMechanism)
		}
		text += fmt.Sprintf("; %.2f ms of the rest is on the critical path (the running row, taken out of the unknown row)", float64(crit)/nn/1e6)
		if period > 0 && cpu > 0 {
			text += fmt.Sprintf("; JFR's execution samples would have said %.2f ms (%d samples × %v: %.0f%% of it — the sampler walks only Java code, not native code or intrinsics)",
				sampled, in, period, 100*sampled*nn*1e6/float64(cpu))
		}
		return &budget.Finding{Kind: budget.FindInferred, Text: text}
	}
	if period <= 0 {
		return &budget.Finding{Kind: budget.FindInferred, Text: fmt.Sprintf(
			"%d execution samples on the requests' threads while they worked for a request, but the recording does not say jdk.ExecutionSample's period: no request CPU, so no coverage line", in)}
	}
	text := fmt.Sprintf(
		"request CPU is SAMPLED, not measured (the recording's latscope events carry no cpuTime: a Java library before it, or a JVM without thread CPU time): %d samples × %v = %.2f ms per request (±%.0f%%, one standard error of a sample count); "+
			"the other %d samples (JFR, GC, JIT and server threads, and time outside requests) are not counted. "+
			"JFR samples a thread only while it runs Java code, not in native code, the JVM or intrinsics (a SHA-256 loop leaves almost no samples): the figure may be low",
		in, period, sampled, 100/math.Sqrt(float64(max(in, 1))), o.all-in)
	if e := a.env; e.loadTime > 0 && e.hwThreads > 0 && n > 0 {
		jvm := e.jvmBusy * float64(e.hwThreads) * (float64(a.rec.End().Sub(a.rec.Start())) / e.loadTime) / nn / 1e6
		if jvm > sampled {
			text += fmt.Sprintf(" by up to %.2f ms per request: the JVM used %.2f ms of CPU per request in all (jdk.CPULoad), JIT, GC and JFR included; update the library (java/) to measure it", jvm-sampled, jvm)
		}
	}
	return &budget.Finding{Kind: budget.FindInferred, Text: text}
}

// givenFinding reports flags of the handler mode given to a recording
// with requests.
func (a *Analyzer) givenFinding(n int) *budget.Finding {
	var parts []string
	if a.opts.Handler != "" {
		parts = append(parts, fmt.Sprintf("--handler %s is not used: the latscope.Request events mark the requests", a.opts.Handler))
	}
	given, src := a.opts.Requests, "--requests"
	if a.opts.Load != nil {
		given, src = a.opts.Load.Count, "--requests-from"
	}
	switch {
	case given > 0 && given != n:
		parts = append(parts, fmt.Sprintf("%s counts %d requests but the recording has %d latscope.Request events inside it: the events are used (requests outside the recording, or not marked by the library, make the difference)", src, given, n))
	case given > 0:
		parts = append(parts, fmt.Sprintf("%s counts %d requests, as many as the recording's latscope.Request events", src, given))
	}
	if len(parts) == 0 {
		return nil
	}
	return &budget.Finding{Kind: budget.FindInferred, Text: strings.Join(parts, "; ")}
}

// hiddenFinding bounds what the thresholds hide. With the requests' CPU
// measured, the unknown row holds only the waits shorter than their
// event's threshold and the time a thread waited for a CPU: the recorded
// waits (a monitor's, JFR's own JavaMonitorEnter sum) may be low by up to
// that much.
func (a *Analyzer) hiddenFinding(res *budget.Result, o *reqOutcome) *budget.Finding {
	if !o.cpuExact {
		return nil
	}
	var parts []string
	for _, g := range res.Groups {
		if g.Count == 0 || g.Latency.Mean <= 0 {
			continue
		}
		u := float64(max(0, g.Unknown)) / float64(g.Count)
		parts = append(parts, fmt.Sprintf("%s %.2f ms per request (%.1f%% of the mean)", g.Name, u/1e6, 100*u/g.Latency.Mean))
	}
	if len(parts) == 0 {
		return nil
	}
	th := "unknown"
	if v := a.env.settings.Effective(a.rec, "jdk.JavaMonitorEnter", "threshold"); len(v) > 0 {
		th = strings.Join(v, " → ")
	}
	return &budget.Finding{Kind: budget.FindUnexplained, Text: fmt.Sprintf(
		"what the thresholds may hide: with the CPU measured, the unknown row is only waits shorter than their event's threshold and time waiting for a CPU: %s. "+
			"Each wait term (a lock's JavaMonitorEnter sum, at threshold %s here) may be low by up to that much; internal/jfr/latscope.jfc records every contended monitor enter (threshold 0 ms: one event per contended enter, none for the rest)",
		strings.Join(parts, "; "), th)}
}

// handOffFinding states, for each lock the library marks (a hold no two
// threads overlapped), how long it stayed free at a contended hand-off:
// from one holder's release to the next one's start, while that one, already
// waiting, was woken. No one holds the lock then, and a queueing model that
// charges the lock only its holds will find it less busy than it is.
func handOffFinding(hs map[string]HandOff) *budget.Finding {
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(hs)) {
		h := hs[f]
		if h.Overlaps > 0 || h.Contended == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d of %d holds were handed to a waiting thread, after %.3f ms free on average", f, h.Contended, h.Holds, float64(h.Mean)/1e6))
	}
	if len(parts) == 0 {
		return nil
	}
	return &budget.Finding{Kind: budget.FindInferred, Text: "lock hand-offs (latscope.Hold, io.latscope.Holds): " + strings.Join(parts, "; ") +
		": the lock is unusable while its next holder is woken, on top of the holds (predict --pool NAME:1 charges it to every hold, as at saturation)"}
}
