package sched

import (
	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/frame"
)

// Thresholds decide findings and bursts (churn.Thresholds, shared with
// the JVM's churn analysis). They come from the method (docs/sched.md); a
// zero field takes DefaultThresholds' value.
type Thresholds = churn.Thresholds

// DefaultThresholds are the thresholds of `latscope analyze`.
var DefaultThresholds = churn.DefaultThresholds

// Options configure an analysis. A zero field takes DefaultOptions' value.
type Options struct {
	Frames     *Frames     // the frame table
	Rules      frame.Rules // decide application frames (payers, wakers)
	Thresholds Thresholds
	Host       Host // what the process may use, when known
	Top        int  // rows in top-N lists
}

// DefaultOptions are the options of `latscope analyze` without flags.
var DefaultOptions = Options{
	Frames:     DefaultFrames,
	Rules:      frame.DefaultRules,
	Thresholds: DefaultThresholds,
	Top:        8,
}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Frames == nil {
		o.Frames = d.Frames
	}
	if o.Rules.Infra == nil && o.Rules.Machinery == nil && o.Rules.App == nil {
		o.Rules = d.Rules
	}
	if o.Top <= 0 {
		o.Top = d.Top
	}
	o.Thresholds = o.Thresholds.Or(d.Thresholds)
	return o
}
