package sched

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/units"
)

// JVMReport is the outcome of the JVM's churn analysis (JVMChurn.Result):
// a JVM recording's scheduler section, as Report is a Go trace's.
type JVMReport struct {
	// Duration is the recording's window (JVMOptions.Recording), else
	// first to last sample or park (JSON: duration_ms).
	Duration time.Duration `json:"-"`
	// Samples are the jdk.ExecutionSample events: threads caught running
	// Java code. Machinery are those in a JVMGroup; Share is
	// Machinery/Samples, Low and High its 95 % interval (Wilson score).
	Samples   int64      `json:"samples"`
	Machinery int64      `json:"machinery_samples"`
	Share     float64    `json:"share"`
	Low       float64    `json:"share_low"`
	High      float64    `json:"share_high"`
	Groups    []JVMShare `json:"groups"` // machinery groups, heaviest first
	// Top are the frames that decided machinery samples; Payers the
	// application frames on their stacks ("": none, a pool thread).
	Top    []JVMFrameCount `json:"top"`
	Payers []JVMFrameCount `json:"payers"`
	// Period is the shortest jdk.ExecutionSample period recorded; 0 when
	// the recording's settings were not read.
	Period time.Duration `json:"-"` // JSON: period_ms, absent when unknown
	// NativeSamples are jdk.NativeMethodSample events: threads in native
	// code, running or blocked. They are counted, never taken as CPU.
	NativeSamples int64     `json:"native_samples"`
	Parks         ParkStats `json:"parks"`
	ThreadStarts  int64     `json:"thread_starts"`
	ThreadEnds    int64     `json:"thread_ends"`
	// JVMCPU is the JVM's CPU over the recording from jdk.CPULoad; nil
	// without those events or jdk.CPUInformation.
	JVMCPU     *JVMCPU          `json:"jvm_cpu,omitempty"`
	Thresholds churn.Thresholds `json:"thresholds"`
}

// JVMShare is one machinery group's samples.
type JVMShare struct {
	Group   JVMGroup `json:"group"`
	Samples int64    `json:"samples"`
	Share   float64  `json:"share"` // of all execution samples
}

// JVMFrameCount is one frame's machinery samples.
type JVMFrameCount struct {
	Frame   string  `json:"frame"`
	Samples int64   `json:"samples"`
	Share   float64 `json:"share"` // of all execution samples
}

// ParkStats counts the recorded jdk.ThreadPark events. JFR records a park
// only if it lasts at least the event's threshold, so these are the parks
// at least that long.
type ParkStats struct {
	Threshold string      `json:"threshold,omitempty"` // jdk.ThreadPark's; "" when unknown
	Total     int64       `json:"total"`
	ByCause   []ParkCount `json:"by_cause"` // what the thread parked in
	// IdleWakeups are the ends of parks of idle pool workers (ForkJoinPool
	// awaitWork, ThreadPoolExecutor getTask): a worker woken. Bursts
	// clusters them: a gap over Gap ends a burst; Large bursts have at
	// least MinSize wakeups, InLarge in all.
	IdleWakeups int64         `json:"idle_wakeups"`
	Gap         time.Duration `json:"-"` // JSON: gap_ms
	MinSize     int           `json:"min_size"`
	Bursts      int64         `json:"bursts"`
	Max         int           `json:"max_size"`
	Large       int64         `json:"large"`
	InLarge     int64         `json:"in_large"`
	LargeMedian int           `json:"large_median_size"`
}

// ParkCount is the parks of one cause.
type ParkCount struct {
	Cause JVMGroup `json:"cause"` // JVMOther: not in a pool's or queue's frames
	Count int64    `json:"count"`
}

// JVMCPU is the JVM's CPU from jdk.CPULoad.
type JVMCPU struct {
	Seconds float64       `json:"seconds"`      // user + system CPU-seconds over Span
	System  float64       `json:"system_share"` // of Seconds, in the kernel
	Span    time.Duration `json:"-"`            // the time the jdk.CPULoad events cover (JSON: span_ms)
}

// MarshalJSON writes Span in milliseconds.
func (c *JVMCPU) MarshalJSON() ([]byte, error) {
	type plain JVMCPU
	return json.Marshal(struct {
		*plain
		Span float64 `json:"span_ms"`
	}{(*plain)(c), units.Ms(c.Span)})
}

// MarshalJSON writes Gap in milliseconds.
func (p ParkStats) MarshalJSON() ([]byte, error) {
	type plain ParkStats
	return json.Marshal(struct {
		plain
		Gap float64 `json:"gap_ms"`
	}{plain(p), units.Ms(p.Gap)})
}

// MarshalJSON writes the durations in milliseconds (period_ms absent when
// unknown), the share and its interval as null without samples, and adds
// the verdict and the findings.
func (r *JVMReport) MarshalJSON() ([]byte, error) {
	type plain JVMReport
	var period *float64
	if r.Period > 0 {
		p := units.Ms(r.Period)
		period = &p
	}
	share, low, high := &r.Share, &r.Low, &r.High
	if r.Samples == 0 {
		share, low, high = nil, nil, nil
	}
	return json.Marshal(struct {
		Kind     string   `json:"kind"`
		Verdict  string   `json:"verdict"`
		Duration float64  `json:"duration_ms"`
		Period   *float64 `json:"period_ms,omitempty"`
		*plain
		Share    *float64        `json:"share"`
		Low      *float64        `json:"share_low"`
		High     *float64        `json:"share_high"`
		Findings []churn.Finding `json:"findings"`
	}{"jvm-churn", r.Verdict(), units.Ms(r.Duration), period, (*plain)(r), share, low, high, jvmFindings(r.Findings())})
}

func jvmFindings(f []churn.Finding) []churn.Finding {
	if f == nil {
		return []churn.Finding{}
	}
	return f
}

// Fixes for churn, in JVM terms (docs/jfr-churn.md). JVMOptionBatch and
// JVMOptionSteady are package churn's, in the JVM's nouns.
var (
	JVMOptionBatch  = churn.JVMNouns.OptionBatch()
	JVMOptionSteady = churn.JVMNouns.OptionSteady()
)

// JVMOptionSmall is the fix of a pool sized to the work.
const JVMOptionSmall = "a pool sized to the work and the CPUs (new ForkJoinPool(2), a fixed ThreadPoolExecutor) instead of a wide one whose idle workers all wake for every burst"

// JVMMoreSamples says how to get more execution samples.
const JVMMoreSamples = "sample every millisecond: record with settings=profile and the churn settings (internal/jfr/churntest/churn.jfc, docs/jfr-churn.md) last, " +
	"or add jdk.ExecutionSample#period=1ms after a single settings= (JDK 17+); or record longer"

// Verdict is the analysis in one sentence: the share against the rule, or
// why there is none.
func (r *JVMReport) Verdict() string {
	t := r.Thresholds
	switch {
	case r.Samples == 0:
		return "scheduler churn not measured: the recording has no execution samples (jdk.ExecutionSample)"
	case r.Samples < t.MinSamples:
		return fmt.Sprintf("scheduler churn not judged: %d execution samples are too few (fewer than %d; share %s)", r.Samples, t.MinSamples, r.shareWords())
	case r.Share > t.SchedShare:
		return fmt.Sprintf("scheduler churn: pool machinery took %s of the JVM's execution samples, above %.0f %%", r.shareWords(), 100*t.SchedShare)
	}
	return fmt.Sprintf("no scheduler churn: pool machinery took %s of the JVM's execution samples, not above %.0f %%", r.shareWords(), 100*t.SchedShare)
}

// shareWords is "27 % (95 % interval 23–31 %, 612 samples)".
func (r *JVMReport) shareWords() string {
	return fmt.Sprintf("%.1f %% (%s)", 100*r.Share, churn.IntervalWords(r.Low, r.High, r.Samples))
}

// Findings returns the verdicts that call for action or for a better
// recording, with the kinds of package sched: sched-overhead,
// few-cpu-samples, no-cpu-samples.
func (r *JVMReport) Findings() []churn.Finding {
	t := r.Thresholds
	switch {
	case r.Samples == 0:
		return []churn.Finding{{Kind: churn.FindNoSamples, Text: "the recording has no execution samples, so the share of CPU in ForkJoinPool and thread-pool machinery cannot be measured: " +
			"enable jdk.ExecutionSample (settings=profile and latscope.jfc sample every 10 ms; jdk.ExecutionSample#period=1ms samples ten times as often)"}}
	case r.Samples < t.MinSamples:
		return []churn.Finding{{Kind: churn.FindFewSamples, Text: fmt.Sprintf("only %d execution samples%s (fewer than %d): the pool machinery's share, %s, is too uncertain to judge. "+
			"JFR samples only threads running Java code, so a mostly idle JVM gives few samples at any period. To get more: %s",
			r.Samples, r.SamplingWords(), t.MinSamples, r.shareWords(), r.moreSamples())}}
	case r.Share > t.SchedShare:
		return []churn.Finding{r.overhead()}
	}
	return nil
}

// moreSamples is JVMMoreSamples, or, when the recording sampled every
// millisecond already, what is left.
func (r *JVMReport) moreSamples() string {
	if r.Period > 0 && r.Period <= time.Millisecond {
		return "record longer, or while the service is busy (the recording samples every millisecond already)"
	}
	return JVMMoreSamples
}

// SamplingWords is " in 12.0 s, one every 10ms per thread running Java":
// the window and the period of the execution samples, in the words the
// findings use (and the text report repeats); "" for what is unknown.
func (r *JVMReport) SamplingWords() string {
	s := ""
	if r.Duration > 0 {
		s = fmt.Sprintf(" in %.1f s", r.Duration.Seconds())
	}
	if r.Period > 0 {
		s += fmt.Sprintf(", one every %v per thread running Java", r.Period)
	}
	return s
}

func (r *JVMReport) overhead() churn.Finding {
	var b strings.Builder
	termsafe.Fprintf(&b, "ForkJoinPool and thread-pool machinery took %s of the JVM's execution samples (a look is due above %.0f %%, %s)",
		r.shareWords(), 100*r.Thresholds.SchedShare, churn.Method)
	var parts []string
	for _, g := range r.Groups {
		if g.Share >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.0f %%", g.Group, 100*g.Share))
		}
	}
	if len(parts) > 0 {
		termsafe.Fprintf(&b, ": %s", strings.Join(parts, ", "))
	}
	b.WriteString(churn.InsteadOfWork("waking, scanning and parking pool threads"))
	var pay []string
	for _, p := range r.Payers {
		if p.Frame != "" && p.Share >= 0.01 && len(pay) < 3 {
			pay = append(pay, fmt.Sprintf("%s (%.0f %%)", p.Frame, 100*p.Share))
		}
	}
	termsafe.Fprintf(&b, "%s", churn.PaidOn(pay))
	b.WriteString(r.parkWords())
	b.WriteString("; JFR samples only threads running Java code, so the JVM's own park/unpark and the kernel's part of waking threads are in no sample: the share is a lower bound")
	return churn.Finding{Kind: churn.FindSchedOverhead, Text: b.String(), Options: []string{JVMOptionBatch, JVMOptionSteady, JVMOptionSmall}}
}

// parkWords describes the wakeups of idle pool workers.
func (r *JVMReport) parkWords() string {
	p := r.Parks
	if p.IdleWakeups == 0 || r.Duration <= 0 {
		return ""
	}
	s := fmt.Sprintf("; idle pool workers were woken %.0f times a second (parks of at least %s)", r.PerSecond(p.IdleWakeups), p.ThresholdWords())
	if p.Large > 0 {
		s += fmt.Sprintf(", %.0f %% of them in bursts: %.1f bursts a second woke a median %d at once",
			100*float64(p.InLarge)/float64(p.IdleWakeups), r.PerSecond(p.Large), p.LargeMedian)
	}
	return s
}

// ThresholdWords names the shortest park recorded: jdk.ThreadPark's
// threshold, or the words for it when unknown.
func (p ParkStats) ThresholdWords() string {
	if p.Threshold == "" {
		return "the recording's jdk.ThreadPark threshold"
	}
	return p.Threshold
}

// PerSecond is n events over the recording's window (0 without one).
func (r *JVMReport) PerSecond(n int64) float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(n) / r.Duration.Seconds()
}

// jvmTopCounts returns the n heaviest entries of m, ties by name (churn.Top).
func jvmTopCounts(m map[string]int64, total int64, n int) []JVMFrameCount {
	top := churn.Top(m, total, n)
	out := make([]JVMFrameCount, len(top))
	for i, c := range top {
		out[i] = JVMFrameCount{Frame: c.Frame, Samples: c.Weight, Share: c.Share}
	}
	return out
}
