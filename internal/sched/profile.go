package sched

import (
	"errors"
	"fmt"

	"github.com/google/pprof/profile"
)

// FromProfile analyses a pprof CPU profile: the CPU shares only (a profile
// has no scheduling events). Host, when set in opts, gives Procs.
func FromProfile(p *profile.Profile, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	c, err := profileCPU(p, opts)
	if err != nil {
		return nil, err
	}
	c.setInterval(nil, opts.Thresholds.MinSamples)
	return &Report{CPU: c, Procs: procsOf(opts.Host, 0), Thresholds: opts.Thresholds}, nil
}

// UseProfile replaces the report's CPU shares with those of a pprof CPU
// profile of the same window: the profile usually holds more samples than
// the trace (the trace keeps only those taken while it ran).
func (r *Report) UseProfile(p *profile.Profile, opts Options) error {
	opts = opts.withDefaults()
	c, err := profileCPU(p, opts)
	if err != nil {
		return err
	}
	// a profile has no sample order: its samples of the same window are
	// as correlated as the trace's, so the trace's design effect stands
	c.setInterval(r.CPU.design, opts.Thresholds.MinSamples)
	r.CPU = c
	return nil
}

// profileCPU classifies every sample of a CPU profile, weighting it by its
// CPU time.
func profileCPU(p *profile.Profile, opts Options) (CPU, error) {
	if p == nil {
		return CPU{}, errors.New("cpu profile: no profile")
	}
	count, cpu := -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Type == "samples" && count < 0:
			count = i
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			cpu = i
		}
	}
	if cpu < 0 {
		return CPU{}, fmt.Errorf("cpu profile: no cpu/nanoseconds sample type (sample types %s): not a CPU profile", sampleTypes(p))
	}
	acc := newCPUAcc(opts.Frames, &opts.Rules)
	var funcs []string
	for _, s := range p.Sample {
		if cpu >= len(s.Value) || s.Value[cpu] < 0 {
			continue
		}
		funcs = SampleFuncs(funcs[:0], s)
		n := int64(1)
		if count >= 0 && count < len(s.Value) {
			n = s.Value[count]
		}
		acc.add(acc.classify(funcs), n, s.Value[cpu])
	}
	return acc.result("profile", "ns", opts.Top), nil
}

// SampleFuncs appends the function names of a pprof sample to dst, leaf
// first, inlined frames expanded (a Location's Line[0] is the innermost).
func SampleFuncs(dst []string, s *profile.Sample) []string {
	for _, loc := range s.Location {
		if loc == nil {
			continue
		}
		for _, ln := range loc.Line {
			if ln.Function != nil {
				dst = append(dst, ln.Function.Name)
			}
		}
	}
	return dst
}

func sampleTypes(p *profile.Profile) string {
	s := ""
	for i, st := range p.SampleType {
		if i > 0 {
			s += ", "
		}
		s += st.Type + "/" + st.Unit
	}
	if s == "" {
		return "none"
	}
	return s
}
