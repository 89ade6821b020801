package jvm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
)

// WarmupGap: a recording that begins less than this after the JVM started
// was started with it (-XX:StartFlightRecording) and includes warm-up.
const WarmupGap = 10 * time.Second

// WantThreshold is the threshold above which a finding suggests recording
// again: waits shorter than it are missing from every row.
const WantThreshold = "1 ms"

// longer reports whether JFR threshold a ("20 ms") is longer than b; a
// value it cannot read counts as longer.
func longer(a, b string) bool {
	da, ok := jfr.SettingDuration(a)
	db, _ := jfr.SettingDuration(b)
	return !ok || da > db
}

func (a *Analyzer) findings(g *budget.Group) []error {
	var out []error
	add := func(f *budget.Finding) {
		if f != nil {
			out = append(out, f)
		}
	}
	add(&budget.Finding{Kind: budget.FindInferred, Group: g.Name, Text: fmt.Sprintf(
		"%s: handler mode — the recording has no latscope.Request events (the Java library in java/ adds them, and with them per-request latency, percentiles and the critical path across hand-offs; docs/jfr.md). "+
			"JFR records waits per thread, without wakeup edges, so a request's critical path is taken to be its handler thread's waits (critical = wait). "+
			"That holds when each request runs on one thread; work handed to another thread shows only as the handler's wait for it (Future.get, a queue)", g.Name)})
	add(a.cpuFinding(g))
	add(a.latencyFinding(g))
	add(a.thresholdFinding())
	add(a.warmupFinding())
	add(a.jitFinding())
	add(a.edgeFinding(g))
	add(a.cutFinding(g))
	add(a.saturationFinding())
	return out
}

func (a *Analyzer) cpuFinding(g *budget.Group) *budget.Finding {
	text := fmt.Sprintf("%s: the requests column is an upper bound, min(events, requests): JFR events carry no request identity. "+
		"Running and runnable time are not measured: execution samples are counts (%d under the handler of %d), set against each application frame's waits in the regions line",
		g.Name, a.hSamples, a.samples)
	if e := a.env; e.loadTime > 0 && e.hwThreads > 0 {
		s := e.jvmBusy * float64(e.hwThreads) / 1e9
		text += fmt.Sprintf("; the JVM used %.3f CPU-seconds over the recording (jdk.CPULoad): --cpu-seconds %.3f cross-checks the budget if the JVM served nothing else", s, s)
	}
	return &budget.Finding{Kind: budget.FindInferred, Group: g.Name, Text: text}
}

func (a *Analyzer) latencyFinding(g *budget.Group) *budget.Finding {
	if a.opts.Load != nil {
		return nil
	}
	return &budget.Finding{Kind: budget.FindInferred, Group: g.Name, Text: fmt.Sprintf(
		"%s: %d requests from --requests; a recording has no latencies, so the table is time per request, not a share of latency, and every share reads 0 "+
			"(give --requests-from the `latscope load -o` results for latencies)",
		g.Name, a.count)}
}

// thresholdFinding states each wait event's threshold: events shorter than
// it are not recorded.
func (a *Analyzer) thresholdFinding() *budget.Finding {
	var set, off []string
	high := false
	st := &a.env.settings
	for _, typ := range jfr.WaitEvents {
		if !st.Has(typ) {
			continue
		}
		if en := st.Effective(a.rec, typ, "enabled"); len(en) > 0 && !slices.Contains(en, "true") {
			off = append(off, typ)
			continue
		}
		th := st.Effective(a.rec, typ, "threshold")
		if len(th) == 0 {
			continue
		}
		v := strings.Join(th, " → ")
		if len(th) > 1 {
			v += " (changed while recording)"
		}
		set = append(set, typ+" "+v)
		for _, t := range th {
			high = high || longer(t, WantThreshold)
		}
	}
	var b strings.Builder
	switch {
	case st.Empty():
		b.WriteString("the recording has no jdk.ActiveSetting events: the JFR thresholds are unknown, and waits shorter than them are in no row")
	default:
		b.WriteString("JFR records a wait only if it lasts at least its event's threshold; shorter waits are in no row: ")
		b.WriteString(strings.Join(set, ", "))
	}
	if len(off) > 0 {
		fmt.Fprintf(&b, "; not recorded at all (disabled): %s", strings.Join(off, ", "))
	}
	if high || len(off) > 0 {
		fmt.Fprintf(&b, "; record with %s thresholds (settings=profile plus internal/jfr/latscope.jfc, docs/jfr.md)", WantThreshold)
	}
	return &budget.Finding{Kind: budget.FindUnexplained, Text: b.String()}
}

func (a *Analyzer) warmupFinding() *budget.Finding {
	if a.env.jvmStart.IsZero() {
		return nil
	}
	gap := a.rec.Start().Sub(a.env.jvmStart)
	if gap >= WarmupGap {
		return nil
	}
	return &budget.Finding{Kind: budget.FindWarmup, Text: fmt.Sprintf(
		"the recording began %.1f s after the JVM started: it was started with the JVM (-XX:StartFlightRecording) and includes warm-up — class loading, JIT compilation, pool filling — whose waits are in the sums; "+
			"start it after warm-up with jcmd PID JFR.start (docs/jfr.md)", gap.Seconds())}
}

// jitFinding says, where the JIT compiler compiled for more than
// budget.JITShare of the JVM's CPU time over the recording (the totals of
// jdk.CompilerStatistics from its first sample to its last, against
// jdk.CPULoad), that the JVM was not at a steady state. Compile time is
// the compilations' duration, a wait of their thread for a core included,
// so the share is an upper bound.
func (a *Analyzer) jitFinding() *budget.Finding {
	e := a.env
	span := e.compLast.at.Sub(e.compFirst.at)
	compiled := e.compLast.Time - e.compFirst.Time
	if e.loadTime <= 0 || e.hwThreads <= 0 || span <= 0 || compiled <= 0 {
		return nil
	}
	rate := compiled.Seconds() / span.Seconds()
	jvm := e.jvmBusy / e.loadTime * float64(e.hwThreads) // cores
	if jvm <= 0 || rate <= budget.JITShare*jvm {
		return nil
	}
	text := fmt.Sprintf(
		"the JIT compiler compiled for %.2f s of each second over %.1f s of the recording (jdk.CompilerStatistics: %.2f s, %d methods), up to %.0f%% of the JVM's CPU (jdk.CPULoad: %.2f cores): the JVM was not at a steady state. "+
			"That CPU is in the JVM's CPU outside requests, which a prediction charges to every request and a later run may not spend",
		rate, span.Seconds(), compiled.Seconds(), e.compLast.Count-e.compFirst.Count, 100*min(1, rate/jvm), jvm)
	if !e.jvmStart.IsZero() && a.rec.Start().Sub(e.jvmStart) >= WarmupGap {
		// begun on a running JVM (else the warm-up finding says why)
		text += ". Where the recording was started on a running JVM, that start causes some of it (the recorder's event code is instrumented, deoptimized and compiled again): " +
			"keep a recording on from the JVM's start (-XX:StartFlightRecording) and start the measured one with jcmd PID JFR.start with the same settings (docs/jfr.md)"
	}
	return &budget.Finding{Kind: budget.FindJIT, Text: text}
}

func (a *Analyzer) edgeFinding(g *budget.Group) *budget.Finding {
	l := a.opts.Load
	if l == nil || l.EdgeCounted+l.Before+l.After+l.Outside == 0 {
		return nil
	}
	var parts []string
	if cut := l.EdgeCounted + l.Before + l.After; cut > 0 {
		parts = append(parts, fmt.Sprintf("%d load results overlapped an edge of the recording: %d with most of their time inside are counted, %d are not (%d at the start, %d at the end); "+
			"their waits inside cannot be told apart, so per-request figures carry an edge error of about %.1f%% (half the cut requests over the %d counted)",
			cut, l.EdgeCounted, l.Before+l.After, l.Before, l.After, 100*float64(cut)/2/float64(g.Count), g.Count))
	}
	if l.Outside > 0 {
		parts = append(parts, fmt.Sprintf("%d results lie outside the recording and are not counted", l.Outside))
	}
	return &budget.Finding{Kind: budget.FindCutByWindow, Group: g.Name, Text: g.Name + ": " + strings.Join(parts, "; ")}
}

func (a *Analyzer) cutFinding(g *budget.Group) *budget.Finding {
	if a.cut.events == 0 {
		return nil
	}
	return &budget.Finding{Kind: budget.FindUnexplained, Group: g.Name, Text: fmt.Sprintf(
		"%d waits (%.1f ms in all) outside %s have stacks the JVM cut at its stack depth: some may be request time whose handler frame was cut off; "+
			"if the handler sits deeper than 64 frames, record with -XX:FlightRecorderOptions:stackdepth=256",
		a.cut.events, float64(a.cut.wait)/1e6, g.Name)}
}

func (a *Analyzer) saturationFinding() *budget.Finding {
	e := a.env
	if e.loadTime <= 0 {
		return nil
	}
	busy := e.machBusy / e.loadTime
	if busy <= budget.SaturatedBusy {
		return nil
	}
	jvm := e.jvmBusy / e.loadTime
	// The kind is host-busy, not cpu-saturated: with a CPU counter (the
	// request CPU, which request mode always gives) the report drops a
	// trace's own cpu-saturated finding for the counter's, and the
	// requests' CPU is not the machine's.
	who := "other processes held most of it"
	if jvm > busy/2 {
		who = "most of it was this JVM's"
	}
	return &budget.Finding{Kind: budget.FindHostBusy, Text: fmt.Sprintf(
		"CPU-saturated: the machine's CPUs were %.0f%% busy over the recording (jdk.CPULoad machineTotal; this JVM %.0f%%: %s): latency contains CPU queueing, every wait includes the time its thread then waited for a CPU, and a prediction that adds CPU work or clients meets a full CPU", busy*100, jvm*100, who)}
}

// CPULoad is what jdk.CPULoad said over the recording: the JVM's CPU time
// (all its threads: requests, the server's, GC, JIT, JFR), and the JVM's and
// the whole machine's shares of all hardware threads (0–1); ok is false
// without jdk.CPULoad events.
func (a *Analyzer) CPULoad() (jvm time.Duration, jvmShare, machineShare float64, ok bool) {
	e := a.env
	if e.loadTime <= 0 || e.hwThreads <= 0 {
		return 0, 0, 0, false
	}
	d := float64(a.rec.End().Sub(a.rec.Start()))
	jvmShare, machineShare = e.jvmBusy/e.loadTime, e.machBusy/e.loadTime
	return time.Duration(jvmShare * float64(e.hwThreads) * d), jvmShare, machineShare, true
}
