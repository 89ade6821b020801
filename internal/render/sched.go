package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/termsafe"
)

// WriteSched prints a Go trace's scheduler section under analyze's report,
// with its heading, when there is CPU data (nothing otherwise).
func WriteSched(w io.Writer, s *sched.Report) error {
	if s == nil || s.CPU.Samples == 0 {
		return nil
	}
	var b strings.Builder
	if err := WriteSchedText(&b, s); err != nil {
		return err
	}
	text := strings.TrimRight(b.String(), "\n")
	_, err := fmt.Fprintf(w, "\nscheduler and runtime overhead (from CPU samples):\n%s\n", text)
	return err
}

// WriteSchedText writes the scheduler report for people: the CPU shares,
// what the trace shows, GOMAXPROCS against the limit, and the findings.
func WriteSchedText(w io.Writer, r *sched.Report) error {
	bw := bufio.NewWriter(w)
	writeSchedCPU(bw, &r.CPU)
	if r.Trace != nil {
		writeSchedTrace(bw, r.Trace)
	}
	writeSchedProcs(bw, r.Procs)
	if fs := r.Findings(); len(fs) > 0 {
		fmt.Fprintln(bw, "\nfindings:")
		for _, f := range fs {
			termsafe.Fprintf(bw, "  - %s: %s\n", f.Kind, f.Error())
		}
	}
	return bw.Flush()
}

func writeSchedCPU(w io.Writer, c *sched.CPU) {
	termsafe.Fprintf(w, "scheduler overhead: CPU samples from the %s (%d samples)\n", c.Source, c.Samples)
	if c.Samples == 0 {
		return
	}
	fmt.Fprintln(w, "  class             share")
	for _, s := range c.Classes {
		termsafe.Fprintf(w, "  %-16s %5.1f %%", s.Class, 100*s.Share)
		if s.Class == sched.ClassScheduler {
			if iv := c.Interval; iv != nil {
				termsafe.Fprintf(w, "  95 %% interval %.1f–%.1f %%", 100*iv.Low, 100*iv.High)
				if iv.DesignEffect > 1 {
					termsafe.Fprintf(w, " (%.0f effective samples)", iv.EffectiveSamples)
				}
			} else {
				termsafe.Fprintf(w, "  ±%.1f", 100*c.Margin(sched.ClassScheduler))
			}
		}
		fmt.Fprintln(w)
	}
	for _, cl := range []sched.Class{sched.ClassScheduler, sched.ClassGC, sched.ClassInstrument} {
		for _, g := range c.GroupsOf(cl) {
			termsafe.Fprintf(w, "    %-15s %-22s %5.1f %%\n", cl, g.Group, 100*g.Share)
		}
	}
	if len(c.Top) > 0 {
		fmt.Fprintln(w, "  scheduler frames (innermost listed frame):")
		for _, f := range c.Top {
			termsafe.Fprintf(w, "    %5.1f %%  %s\n", 100*f.Share, f.Frame)
		}
	}
	if len(c.Payers) > 0 {
		fmt.Fprintln(w, "  scheduler CPU on the stacks of:")
		for _, f := range c.Payers {
			name := "(scheduler loop, no application frame)"
			if f.Frame != "" {
				name = frame.Short(f.Frame)
			}
			termsafe.Fprintf(w, "    %5.1f %%  %s\n", 100*f.Share, name)
		}
	}
}

func writeSchedTrace(w io.Writer, t *sched.TraceStats) {
	termsafe.Fprintf(w, "trace: %s, %d Ps ran, %d OS threads\n", roundDur(t.Duration), t.PsSeen, t.Threads)
	termsafe.Fprintf(w, "  P starts %.0f/s, stops %.0f/s\n", t.PerSecond(t.PStarts), t.PerSecond(t.PStops))
	termsafe.Fprintf(w, "  made runnable %.0f/s: created %.0f/s, woken %.0f/s (%.0f/s by the network poller or timers)\n",
		t.PerSecond(t.Creations+t.Wakeups), t.PerSecond(t.Creations), t.PerSecond(t.Wakeups), t.PerSecond(t.PollWakeups))
	b := t.Bursts
	termsafe.Fprintf(w, "  bursts (gaps ≤ %v): %.1f/s, size median %d, p90 %d, max %d; the busiest tenth of the time held %.0f %% of them\n",
		b.Gap, t.PerSecond(b.Count), b.Median, b.P90, b.Max, 100*b.Busiest)
	if b.Large > 0 {
		termsafe.Fprintf(w, "  large bursts (≥ %d): %.1f/s, median %d, holding %.0f %% of all wakeups and creations\n",
			b.MinSize, t.PerSecond(b.Large), b.LargeMedian, 100*float64(b.InLarge)/float64(max(t.Wakeups+t.Creations, 1)))
	}
	for _, c := range t.Causes {
		if float64(c.Count) >= 0.01*float64(b.InLarge) {
			termsafe.Fprintf(w, "    %7.1f per burst  %s\n", c.PerBurst, sched.CauseWords(c))
		}
	}
	ws := t.Wait
	termsafe.Fprintf(w, "  runnable wait after a wakeup or creation: mean %s, p50 %s, p90 %s, p99 %s, max %s (%d)\n",
		roundDur(ws.Mean), roundDur(ws.P50), roundDur(ws.P90), roundDur(ws.P99), roundDur(ws.Max), ws.Count)
}

func writeSchedProcs(w io.Writer, p sched.Procs) {
	fmt.Fprint(w, "GOMAXPROCS: ")
	switch {
	case p.GOMAXPROCS > 0:
		termsafe.Fprintf(w, "%d", p.GOMAXPROCS)
	case p.PsSeen > 0:
		termsafe.Fprintf(w, "≥ %d (Ps seen)", p.PsSeen)
	default:
		fmt.Fprint(w, "unknown")
	}
	if p.NumCPU > 0 {
		termsafe.Fprintf(w, "; %d CPUs", p.NumCPU)
	}
	if p.Known {
		termsafe.Fprintf(w, "; %s", sched.QuotaWords(p.Quota))
		if p.QuotaPath != "" {
			termsafe.Fprintf(w, " on %s", p.QuotaPath)
		}
	}
	if p.Fit > 0 {
		termsafe.Fprintf(w, "; fits %d (the runtime's default: %d)", p.Fit, p.RuntimeDefault)
	}
	fmt.Fprintln(w)
}

// roundDur rounds d for display to three significant digits or so.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}
