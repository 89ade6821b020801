package sched

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/frame"
)

// FindingKind classifies a Finding: churn's kinds, shared with the JVM's
// churn analysis.
type FindingKind = churn.FindingKind

// Finding kinds.
const (
	FindSchedOverhead     = churn.FindSchedOverhead     // the scheduler's share of CPU is over the threshold
	FindProcsAbove        = churn.FindProcsAbove        // GOMAXPROCS is above the CPUs the process may use
	FindParentLimit       = churn.FindParentLimit       // a parent cgroup's quota binds; the runtime's default misses it
	FindNoSamples         = churn.FindNoSamples         // no CPU samples: the share cannot be measured
	FindFewSamples        = churn.FindFewSamples        // too few CPU samples to judge the share
	FindSchedInconclusive = churn.FindSchedInconclusive // the share's 95 % interval contains the threshold
)

// Finding is a typed warning: a plain-words statement of what was found and
// what to do about it (churn.Finding, shared with the JVM's churn).
type Finding = churn.Finding

// Fixes for scheduler overhead (docs/method.md §9, in Go terms).
const (
	OptionPool     = "a bounded worker pool sized to the CPUs, fed by a buffered channel, instead of a goroutine per item or a pool as wide as GOMAXPROCS"
	OptionProcs    = "lower GOMAXPROCS to the CPUs the process may use: fewer Ps, fewer threads to wake and park per burst"
	OptionDefaults = "drop an explicit GOMAXPROCS so Go 1.25+ derives it from the cgroup quota"
)

// Fixes both runtimes give, in Go's nouns (package churn writes them once).
var (
	OptionBatch  = churn.GoNouns.OptionBatch()
	OptionSteady = churn.GoNouns.OptionSteady()
)

// Findings returns the report's findings.
func (r *Report) Findings() []Finding {
	var out []Finding
	t := Options{Thresholds: r.Thresholds}.withDefaults().Thresholds
	switch c := &r.CPU; {
	case c.Samples == 0:
		out = append(out, Finding{Kind: FindNoSamples, Text: "there are no CPU samples, so the scheduler's share of CPU cannot be measured: " +
			"record the trace while the CPU profiler runs (pprof.StartCPUProfile, or fetch /debug/pprof/profile during /debug/pprof/trace), or add a CPU profile of the same window (--cpu)"})
	case c.Samples < t.MinSamples:
		out = append(out, Finding{Kind: FindFewSamples, Text: fmt.Sprintf("only %d CPU samples (fewer than %d): the scheduler's share (%.0f %%) is too uncertain to judge; record a longer window",
			c.Samples, t.MinSamples, 100*c.Share(ClassScheduler))})
	default:
		// judged by the share's 95 % interval: over the bar only when its
		// lower bound is (docs/method.md §9)
		switch iv := c.judged(t.MinSamples); {
		case iv.Low > t.SchedShare:
			out = append(out, r.overhead(t, iv))
		case iv.High > t.SchedShare:
			out = append(out, r.inconclusive(t, iv))
		}
	}
	p := r.Procs
	if p.Above() {
		out = append(out, procsAbove(p))
	}
	if p.ParentMissed() {
		out = append(out, Finding{Kind: FindParentLimit, Text: fmt.Sprintf("the tightest CPU quota, %.3g CPUs, is on the cgroup %s and not on the process's own (%s): "+
			"Go 1.25+ reads only its own cgroup, so its default GOMAXPROCS (%d) misses it (golang/go#81180); set GOMAXPROCS=%d explicitly",
			p.Quota, p.QuotaPath, QuotaWords(p.OwnQuota), p.RuntimeDefault, p.Fit)})
	}
	return out
}

// intervalWords is "95 % interval 12–27 %, 100 samples, 61 effective".
func intervalWords(c *CPU, iv *ShareInterval) string {
	s := churn.IntervalWords(iv.Low, iv.High, c.Samples)
	if iv.DesignEffect > 1 {
		s += fmt.Sprintf(", %.0f effective: they come in correlated runs", iv.EffectiveSamples)
	}
	return s
}

// inconclusive says that the share's interval contains the threshold, and
// how many more samples would decide it: the interval narrows as 1/√n.
func (r *Report) inconclusive(t Thresholds, iv *ShareInterval) Finding {
	c := &r.CPU
	p := c.Share(ClassScheduler)
	text := fmt.Sprintf("the Go scheduler took %.0f %% of the process's CPU (%s), and the interval contains the %.0f %% above which a look is due (%s): inconclusive",
		100*p, intervalWords(c, iv), 100*t.SchedShare, churn.Method)
	half, need := p-iv.Low, p-t.SchedShare
	if p < t.SchedShare {
		half, need = iv.High-p, t.SchedShare-p
	}
	if need > 0 {
		f := math.Ceil(10*(half/need)*(half/need)) / 10
		text += fmt.Sprintf("; about %.1f× as many samples would decide it", f)
		if r.Trace != nil && r.Trace.Duration > 0 {
			text += fmt.Sprintf(" (a window of ≈%.1f s)", f*r.Trace.Duration.Seconds())
		}
	}
	return Finding{Kind: FindSchedInconclusive, Text: text}
}

func (r *Report) overhead(t Thresholds, iv *ShareInterval) Finding {
	c := &r.CPU
	var b strings.Builder
	fmt.Fprintf(&b, "the Go scheduler took %.0f %% of the process's CPU (%s: all of it above the %.0f %% at which a look is due, %s)",
		100*c.Share(ClassScheduler), intervalWords(c, iv), 100*t.SchedShare, churn.Method)
	if parts := schedParts(c); parts != "" {
		fmt.Fprintf(&b, ": %s", parts)
	}
	b.WriteString(churn.InsteadOfWork("creating, parking and waking goroutines and threads"))
	b.WriteString(churn.PaidOn(payers(c)))
	if tr := r.Trace; tr != nil {
		b.WriteString(burstWords(tr))
	}
	if e := r.Procs.Effective(); e > 0 && r.Procs.Fit > 0 && e > r.Procs.Fit {
		fmt.Fprintf(&b, "; %d Ps for %d usable CPUs", e, r.Procs.Fit)
	}
	opts := []string{OptionPool, OptionBatch, OptionSteady}
	if r.Procs.Above() || r.Procs.Fit == 0 {
		opts = append(opts, OptionProcs)
	}
	return Finding{Kind: FindSchedOverhead, Text: b.String(), Options: opts}
}

// schedParts lists the scheduler's groups with their shares.
func schedParts(c *CPU) string {
	var parts []string
	for _, g := range c.GroupsOf(ClassScheduler) {
		if g.Share >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.0f %%", g.Group, 100*g.Share))
		}
	}
	return strings.Join(parts, ", ")
}

// payers lists the application frames that paid 1 % or more, at most three.
func payers(c *CPU) []string {
	var parts []string
	for _, p := range c.Payers {
		if p.Frame == "" || p.Share < 0.01 || len(parts) == 3 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%.0f %%)", frame.Short(p.Frame), 100*p.Share))
	}
	return parts
}

// burstWords describes the bursts and names their causes.
func burstWords(t *TraceStats) string {
	bs := t.Bursts
	if bs.Large == 0 {
		return fmt.Sprintf("; goroutines were made runnable %.0f times a second, none in bursts of %d or more", t.PerSecond(t.Wakeups+t.Creations), bs.MinSize)
	}
	s := fmt.Sprintf("; goroutines were made runnable in bursts (%.0f a second, %.0f %% of them in the busiest tenth of the time): "+
		"%.1f bursts a second made a median %d runnable at once",
		t.PerSecond(t.Wakeups+t.Creations), 100*bs.Busiest, t.PerSecond(bs.Large), bs.LargeMedian)
	var names []string
	for _, c := range t.Causes {
		if len(names) == 2 || float64(c.Count) < 0.1*float64(bs.InLarge) {
			break
		}
		names = append(names, CauseWords(c))
	}
	if len(names) > 0 {
		s += ", mostly " + strings.Join(names, " and ")
	}
	return s
}

// CauseWords says who made the goroutines of c runnable and where they
// were, in the words the findings use (and the text report repeats).
func CauseWords(c Cause) string {
	actor := "the network poller or a timer"
	if c.Actor != "" {
		actor = frame.Short(c.Actor)
	}
	target := frame.Short(c.Target)
	if c.Kind == CauseCreate {
		if target == "" {
			target = "a function the trace does not name"
		}
		return fmt.Sprintf("created by %s (starting %s, %.0f per burst)", actor, target, c.PerBurst)
	}
	if target == "" {
		return fmt.Sprintf("woken by %s (blocked before the trace began, %.0f per burst)", actor, c.PerBurst)
	}
	return fmt.Sprintf("woken by %s (waiting in %s, %.0f per burst)", actor, target, c.PerBurst)
}

func procsAbove(p Procs) Finding {
	who := fmt.Sprintf("GOMAXPROCS is %d", p.GOMAXPROCS)
	if p.GOMAXPROCS == 0 {
		who = fmt.Sprintf("%d Ps ran in the trace (GOMAXPROCS is at least that)", p.PsSeen)
	}
	limit := QuotaWords(p.Quota)
	if p.NumCPU > 0 {
		limit += fmt.Sprintf(", %d CPUs", p.NumCPU)
	}
	text := fmt.Sprintf("%s but the process may use %d (%s): every extra P is one more thread to wake and park per burst, and under a quota the extra parallelism is throttled",
		who, p.Fit, limit)
	return Finding{Kind: FindProcsAbove, Text: text, Options: []string{fmt.Sprintf("GOMAXPROCS=%d", p.Fit), OptionDefaults}}
}

// QuotaWords names a CFS quota of cpus CPUs (0: none), in the words the
// findings use (and the text report repeats).
func QuotaWords(cpus float64) string {
	if cpus == 0 {
		return "no CFS quota"
	}
	return fmt.Sprintf("CFS quota %.3g CPUs", cpus)
}

// GroupsOf returns the groups of class cl, heaviest first.
func (c *CPU) GroupsOf(cl Class) []GroupShare {
	var out []GroupShare
	for _, g := range c.Groups {
		if g.Class == cl {
			out = append(out, g)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Weight > out[j-1].Weight; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
