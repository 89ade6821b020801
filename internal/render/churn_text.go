package render

import (
	"bufio"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/termsafe"
)

// WriteChurnText writes a JVM recording's churn analysis for people: the
// verdict, the groups, the frames and payers, the parks and thread starts,
// and what the samples cannot see.
func WriteChurnText(w io.Writer, r *sched.JVMReport) error {
	bw := bufio.NewWriter(w)
	termsafe.Fprintf(bw, "%s\n", r.Verdict())
	if r.Samples > 0 {
		writeChurnSamples(bw, r)
	}
	writeChurnParks(bw, r)
	writeChurnCoverage(bw, r)
	if fs := r.Findings(); len(fs) > 0 {
		fmt.Fprintln(bw, "findings:")
		for _, f := range fs {
			termsafe.Fprintf(bw, "  - %s: %s\n", f.Kind, f.Error())
		}
	}
	return bw.Flush()
}

func writeChurnSamples(w io.Writer, r *sched.JVMReport) {
	termsafe.Fprintf(w, "  execution samples: %d%s; native-method samples (not CPU): %d\n", r.Samples, r.SamplingWords(), r.NativeSamples)
	for _, g := range r.Groups {
		termsafe.Fprintf(w, "    %-26s %5.1f %%  (%d)\n", g.Group, 100*g.Share, g.Samples)
	}
	if len(r.Top) > 0 {
		fmt.Fprintln(w, "  machinery frames (innermost listed frame):")
		for _, f := range r.Top {
			termsafe.Fprintf(w, "    %5.1f %%  %s\n", 100*f.Share, f.Frame)
		}
	}
	if len(r.Payers) > 0 {
		fmt.Fprintln(w, "  machinery on the stacks of:")
		for _, f := range r.Payers {
			name := f.Frame
			if name == "" {
				name = "(pool threads, no application frame)"
			}
			termsafe.Fprintf(w, "    %5.1f %%  %s\n", 100*f.Share, name)
		}
	}
}

func writeChurnParks(w io.Writer, r *sched.JVMReport) {
	p := r.Parks
	termsafe.Fprintf(w, "  parks of at least %s: %d", p.ThresholdWords(), p.Total)
	for _, c := range p.ByCause {
		name := c.Cause.String()
		if c.Cause == sched.JVMOther {
			name = "outside pools and queues"
		}
		termsafe.Fprintf(w, "; %s %d", name, c.Count)
	}
	fmt.Fprintln(w)
	if p.IdleWakeups > 0 {
		termsafe.Fprintf(w, "  idle pool workers woken: %.0f/s; bursts (gaps ≤ %v): %.1f/s, max %d", r.PerSecond(p.IdleWakeups), p.Gap, r.PerSecond(p.Bursts), p.Max)
		if p.Large > 0 {
			termsafe.Fprintf(w, "; large (≥ %d): %.1f/s, median %d", p.MinSize, r.PerSecond(p.Large), p.LargeMedian)
		}
		fmt.Fprintln(w)
	}
	termsafe.Fprintf(w, "  threads started: %d, ended: %d\n", r.ThreadStarts, r.ThreadEnds)
}

// writeChurnCoverage says how much of the JVM's CPU the samples can see.
func writeChurnCoverage(w io.Writer, r *sched.JVMReport) {
	c := r.JVMCPU
	if c == nil {
		fmt.Fprintln(w, "  JFR samples only threads running Java code: the JVM's own park/unpark, JIT, GC and the kernel are in no sample")
		return
	}
	termsafe.Fprintf(w, "  the JVM used %.2f CPU-s (jdk.CPULoad, %.0f %% in the kernel)", c.Seconds, 100*c.System)
	if r.Period > 0 && r.Samples > 0 {
		termsafe.Fprintf(w, "; the samples see about %.2f CPU-s of Java code", float64(r.Samples)*r.Period.Seconds())
	}
	fmt.Fprintln(w, "; the rest (the JVM's own park/unpark, JIT, GC, the kernel) is in no sample")
}
