package burst

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/report/markdown"
	"github.com/latscope/latscope/internal/sched"
)

// markdown renders the report section.
func (r *Result) markdown() string {
	var b strings.Builder
	r.writeSetup(&b)
	r.writeVariants(&b)
	r.writeTraces(&b)
	r.writePredictions(&b)
	r.writeFindings(&b)
	return b.String()
}

func (r *Result) writeSetup(b *strings.Builder) {
	s := r.Options.Service
	limit := "no CFS quota"
	if r.Limit != nil && r.Limit.Limited {
		limit = "CFS quota " + r.Limit.Quota.String()
	}
	fmt.Fprintf(b, "Each variant runs as its own process (`latscope-lab burst-serve`): a batch of %d events every %v, "+
		"%d SHA-256 rounds per event. Machine: %d CPUs, %s (GOMAXPROCS that fits: %d). "+
		"Per variant: %v warm-up, %d × %v measured with the independent counter (utime+stime from /proc/PID/stat), "+
		"then a %v CPU profile and a %v execution trace with CPU samples, both at %d Hz.\n\n",
		s.Batch, s.Every, s.Work, r.NumCPU, limit, r.Fit,
		r.Profile.Warmup, max(r.Profile.Runs, 1), r.Profile.Window, r.Options.ProfileWindow, r.Options.TraceWindow, r.Options.Hz)
}

func (r *Result) writeVariants(b *strings.Builder) {
	b.WriteString("**CPU per event** (independent counter) and where the CPU went (CPU profile):\n\n")
	t := markdown.NewTable("variant", "fan-out", "GOMAXPROCS", "events/s", "CPU (cores)", "CPU/event", "thread switches/event", "threads",
		"profile coverage", "scheduler", "GC", "instrumentation").RightFrom(2)
	for _, m := range r.Variants {
		c := &m.Profile.CPU
		t.Row(m.Variant.Name, fanOut(m), fmt.Sprintf("%d", m.GOMAXPROCS), fmt.Sprintf("%.0f", m.EventsPerSec), fmt.Sprintf("%.3f", m.Cores),
			fmt.Sprintf("%.2f µs ± %.2f", m.CPUPerEvent/1e3, m.Median.Resolution(r.HZ)/1e3), fmt.Sprintf("%.3f", m.SwitchesPerEvent),
			fmt.Sprintf("%d", m.Median.Threads), fmt.Sprintf("%.0f %%", 100*m.Coverage),
			fmt.Sprintf("%.1f %% ± %.1f", 100*c.Share(sched.ClassScheduler), 100*c.Margin(sched.ClassScheduler)),
			fmt.Sprintf("%.1f %%", 100*c.Share(sched.ClassGC)), fmt.Sprintf("%.1f %%", 100*c.Share(sched.ClassInstrument)))
	}
	b.WriteString(t.String())
	b.WriteString("\nScheduler CPU by part (profile, share of all CPU):\n\n")
	t = markdown.NewTable(append([]string{"variant"}, schedGroupNames()...)...).RightFrom(1)
	for _, m := range r.Variants {
		cells := []string{m.Variant.Name}
		for _, g := range schedGroups {
			cells = append(cells, fmt.Sprintf("%.1f %%", 100*groupShare(&m.Profile.CPU, g)))
		}
		t.Row(cells...)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

var schedGroups = []sched.Group{sched.GroupFindWork, sched.GroupThreads, sched.GroupHandoff, sched.GroupSpawn, sched.GroupTimers, sched.GroupSysmon}

func schedGroupNames() []string {
	var out []string
	for _, g := range schedGroups {
		out = append(out, g.String())
	}
	return out
}

func groupShare(c *sched.CPU, g sched.Group) float64 {
	for _, s := range c.Groups {
		if s.Group == g {
			return s.Share
		}
	}
	return 0
}

func fanOut(m *Measurement) string {
	switch m.Variant.Mode {
	case Spawn:
		return "goroutine per event"
	case Pool:
		return fmt.Sprintf("%d workers, unbuffered", m.Workers)
	default:
		return fmt.Sprintf("%d workers, buffered", m.Workers)
	}
}

func (r *Result) writeTraces(b *strings.Builder) {
	b.WriteString("**What the traces show** (`sched.Analyzer`; the tracer's own cost counts as instrumentation):\n\n")
	tb := markdown.NewTable("variant", "scheduler (trace)", "Ps ran", "P starts/s", "made runnable/s", "in busiest 10 % of time", "large bursts/s",
		"median large burst", "runnable wait p50", "p99", "finding").Right(1, 2, 3, 4, 5, 6, 7, 8, 9)
	for _, m := range r.Variants {
		t := m.Trace.Trace
		finding := "—"
		if fired(m.Trace) {
			finding = "scheduler overhead"
		}
		tb.Row(m.Variant.Name, fmt.Sprintf("%.1f %%", 100*m.Trace.CPU.Share(sched.ClassScheduler)), fmt.Sprintf("%d", t.PsSeen), fmt.Sprintf("%.0f", t.PerSecond(t.PStarts)),
			fmt.Sprintf("%.0f", t.PerSecond(t.Wakeups+t.Creations)), fmt.Sprintf("%.0f %%", 100*t.Bursts.Busiest), fmt.Sprintf("%.1f", t.PerSecond(t.Bursts.Large)),
			fmt.Sprintf("%d", t.Bursts.LargeMedian), short(t.Wait.P50), short(t.Wait.P99), finding)
	}
	b.WriteString(tb.String())
	b.WriteString("\n")
}

func short(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	}
	return fmt.Sprintf("%d ns", d.Nanoseconds())
}

func (r *Result) writePredictions(b *strings.Builder) {
	if len(r.Predictions) == 0 {
		return
	}
	b.WriteString("**Prediction, then measurement.** A fix that removes the scheduler's work saves the scheduler's share of the bursty variant's CPU: ")
	b.WriteString("predicted CPU/event = before × (1 − share). The profile sampled only part of the CPU the counter saw (coverage), ")
	b.WriteString("so the saving is predicted between share × coverage (none of the unsampled CPU was the scheduler's) and that plus the unsampled part (all of it was).\n\n")
	t := markdown.NewTable("fix", "share before", "coverage", "CPU/event before", "predicted after", "measured after", "predicted saving",
		"measured saving", "scheduler left").RightFrom(1)
	for _, p := range r.Predictions {
		t.Row(p.From+" → "+p.To, fmt.Sprintf("%.1f %% ± %.1f", 100*p.Share, 100*p.Margin), fmt.Sprintf("%.0f %%", 100*p.Coverage),
			fmt.Sprintf("%.2f µs", p.FromCPU/1e3), fmt.Sprintf("%.2f µs", p.PredictedCPU/1e3), fmt.Sprintf("%.2f µs", p.MeasuredCPU/1e3),
			fmt.Sprintf("%.0f–%.0f %%", 100*p.PredictedLow, 100*p.PredictedHigh), fmt.Sprintf("%.0f %% ± %.1f", 100*p.MeasuredSaving, 100*p.Resolution),
			fmt.Sprintf("%.1f %%", 100*p.ToShare))
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

func (r *Result) writeFindings(b *strings.Builder) {
	for _, m := range r.Variants {
		fs := m.Trace.Findings()
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(b, "Findings on the %s trace:\n\n", m.Variant.Name)
		items := make([]string, len(fs))
		for i, f := range fs {
			items[i] = markdown.Bold(f.Kind.String()) + ": " + f.Error()
		}
		b.WriteString(markdown.Bullets(items...))
		b.WriteString("\n")
	}
}
