package sched

import (
	"math"
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/churn"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/tracein"
)

// CPU is how the sampled CPU time divides among the classes. Weights are
// sample counts for a trace and nanoseconds for a pprof profile; shares are
// fractions of Total.
type CPU struct {
	Source  string       `json:"source"`  // "trace" or "profile"
	Samples int64        `json:"samples"` // CPU samples
	Total   int64        `json:"total"`   // Σ weights
	Unit    string       `json:"unit"`    // "samples" or "ns"
	Classes []ClassShare `json:"classes"` // every class, in Class order
	Groups  []GroupShare `json:"groups"`  // groups with any weight, in Group order
	// Top lists the innermost table frames of scheduler samples, heaviest first.
	Top []FrameShare `json:"top"`
	// Payers lists the application frames (frame.Rules.Decide) on the
	// stacks of scheduler samples; "" is the scheduler loop with no
	// application frame (an M looking for work or going to sleep).
	Payers []FrameShare `json:"payers"`
	// Interval is the scheduler share's 95 % interval; absent with fewer
	// samples than are judged (Thresholds.MinSamples).
	Interval *ShareInterval `json:"scheduler_interval,omitempty"`
	// design is the samples' design effect, kept when a profile's
	// shares replace the trace's (UseProfile).
	design *design
}

// ShareInterval is the 95 % interval of a share of CPU samples: the
// Wilson score interval on the effective number of samples, the samples
// divided by their design effect. CPU samples of one burst are not
// independent draws (a scheduler storm is several samples in a row of
// the same class); the design effect measures that from the samples' own
// order in the trace, by batch means over the 0/1 series of "scheduler or
// not" in time order (docs/method.md §13).
type ShareInterval struct {
	Low  float64 `json:"low"`  // fraction 0–1
	High float64 `json:"high"` // fraction 0–1
	// DesignEffect is the variance of the share over that of independent
	// samples (≥ 1); EffectiveSamples is Samples / DesignEffect.
	DesignEffect     float64 `json:"design_effect"`
	EffectiveSamples float64 `json:"effective_samples"`
	// DesignFrom says where the design effect comes from: "trace" (the
	// samples' order in the trace) or "none" (a profile alone has no
	// order, or too few samples to measure it: taken as independent).
	DesignFrom string `json:"design_from"`
}

// design is a measured design effect.
type design struct {
	effect float64
	from   string
}

// ClassShare is one class's weight.
type ClassShare struct {
	Class  Class   `json:"class"`
	Weight int64   `json:"weight"`
	Share  float64 `json:"share"`
}

// GroupShare is one group's weight.
type GroupShare struct {
	Group  Group   `json:"group"`
	Class  Class   `json:"class"`
	Weight int64   `json:"weight"`
	Share  float64 `json:"share"`
}

// FrameShare is one frame's weight.
type FrameShare struct {
	Frame  string  `json:"frame"`
	Weight int64   `json:"weight"`
	Share  float64 `json:"share"`
}

// Share returns the share of CPU in class c (0 without samples).
func (c *CPU) Share(cl Class) float64 {
	for _, s := range c.Classes {
		if s.Class == cl {
			return s.Share
		}
	}
	return 0
}

// Margin returns the half-width of the 95 % confidence interval of the share
// of class cl, treating the samples as independent draws (normal
// approximation of the binomial). The finding judges the scheduler's
// share by Interval instead, which counts correlated samples as fewer.
func (c *CPU) Margin(cl Class) float64 {
	if c.Samples == 0 {
		return 0
	}
	p := c.Share(cl)
	return 1.96 * math.Sqrt(p*(1-p)/float64(c.Samples))
}

// setInterval computes the scheduler share's interval with the design
// effect d (nil: independent) when there are minSamples samples or more.
func (c *CPU) setInterval(d *design, minSamples int64) {
	c.design, c.Interval = d, nil
	if c.Samples == 0 || c.Samples < minSamples {
		return
	}
	eff, from := 1.0, "none"
	if d != nil {
		eff, from = d.effect, d.from
	}
	n := float64(c.Samples) / eff
	lo, hi := stats.Wilson(c.Share(ClassScheduler)*n, n)
	c.Interval = &ShareInterval{Low: round3(lo), High: round3(hi), DesignEffect: round3(eff), EffectiveSamples: round3(n), DesignFrom: from}
}

// judged returns the scheduler share's interval: Interval, or computed
// with the kept design effect when the CPU was built without one.
func (c *CPU) judged(minSamples int64) *ShareInterval {
	if c.Interval == nil {
		cc := *c
		cc.setInterval(c.design, minSamples)
		return cc.Interval
	}
	return c.Interval
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// sampleAt is one trace sample in time order: was it the scheduler's?
type sampleAt struct {
	t     tracein.Time
	sched bool
}

// designOf measures the design effect of the samples' classes in time
// order; nil with too few to measure it.
func designOf(seq []sampleAt) *design {
	if len(seq) < stats.MinSeries {
		return nil
	}
	slices.SortStableFunc(seq, func(a, b sampleAt) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	out := make([]bool, len(seq))
	for i, s := range seq {
		out[i] = s.sched
	}
	return &design{effect: stats.ShareDesignEffect(out), from: "trace"}
}

// cpuAcc accumulates classified samples.
type cpuAcc struct {
	frames  *Frames
	rules   *frame.Rules
	samples int64
	groups  [NumGroups]int64
	top     map[string]int64
	payers  map[string]int64
	seq     []sampleAt // trace samples, for the design effect
}

func newCPUAcc(f *Frames, r *frame.Rules) *cpuAcc {
	return &cpuAcc{frames: f, rules: r, top: map[string]int64{}, payers: map[string]int64{}}
}

// sampleClass is what one stack contributes; it is cached per stack.
type sampleClass struct {
	group Group
	frame string // matched frame
	payer string // application frame
}

func (a *cpuAcc) classify(funcs []string) sampleClass {
	m := a.frames.Classify(funcs)
	sc := sampleClass{group: m.Group, frame: m.Frame}
	if m.Group.Class() == ClassScheduler {
		sc.payer = a.rules.Decide(funcs).App
	}
	return sc
}

// add counts n samples of weight w that classified as sc.
func (a *cpuAcc) add(sc sampleClass, n, w int64) {
	a.samples += n
	a.groups[sc.group] += w
	if sc.group.Class() == ClassScheduler {
		a.top[baseName(sc.frame)] += w
		a.payers[sc.payer] += w
	}
}

// addAt counts one trace sample at time t.
func (a *cpuAcc) addAt(sc sampleClass, t tracein.Time) {
	a.add(sc, 1, 1)
	a.seq = append(a.seq, sampleAt{t, sc.group.Class() == ClassScheduler})
}

// baseName strips a closure suffix: "runtime.gfget.func2" → "runtime.gfget".
func baseName(fn string) string {
	if i := strings.Index(fn, ".func"); i > 0 {
		return fn[:i]
	}
	return fn
}

func (a *cpuAcc) result(source, unit string, top int) CPU {
	c := CPU{Source: source, Samples: a.samples, Unit: unit}
	var byClass [NumClasses]int64
	for g, w := range a.groups {
		c.Total += w
		byClass[Group(g).Class()] += w
	}
	for cl, w := range byClass {
		c.Classes = append(c.Classes, ClassShare{Class: Class(cl), Weight: w, Share: share(w, c.Total)})
	}
	for g, w := range a.groups {
		if w > 0 && Group(g) != GroupNone {
			c.Groups = append(c.Groups, GroupShare{Group: Group(g), Class: Group(g).Class(), Weight: w, Share: share(w, c.Total)})
		}
	}
	c.Top = topFrames(a.top, c.Total, top)
	c.Payers = topFrames(a.payers, c.Total, top)
	return c
}

func share(w, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(w) / float64(total)
}

// topFrames returns the n heaviest entries of m, ties by name (churn.Top).
func topFrames(m map[string]int64, total int64, n int) []FrameShare {
	top := churn.Top(m, total, n)
	out := make([]FrameShare, len(top))
	for i, c := range top {
		out[i] = FrameShare{Frame: c.Frame, Weight: c.Weight, Share: c.Share}
	}
	return out
}
