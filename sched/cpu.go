package sched

import (
	"math"
	"sort"
	"strings"

	"github.com/latscope/latscope/frame"
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
// approximation of the binomial).
func (c *CPU) Margin(cl Class) float64 {
	if c.Samples == 0 {
		return 0
	}
	p := c.Share(cl)
	return 1.96 * math.Sqrt(p*(1-p)/float64(c.Samples))
}

// cpuAcc accumulates classified samples.
type cpuAcc struct {
	frames  *Frames
	rules   *frame.Rules
	samples int64
	groups  [NumGroups]int64
	top     map[string]int64
	payers  map[string]int64
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

// topFrames returns the n heaviest entries of m, ties by name.
func topFrames(m map[string]int64, total int64, n int) []FrameShare {
	out := make([]FrameShare, 0, len(m))
	for f, w := range m {
		out = append(out, FrameShare{Frame: f, Weight: w, Share: share(w, total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].Frame < out[j].Frame
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
