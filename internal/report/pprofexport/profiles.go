package pprofexport

import (
	"fmt"
	"github.com/latscope/latscope/internal/opterr"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
)

// Wall returns the wall-clock profile of in-request goroutine time: off-CPU
// waits by blocking stack, running time spread over the CPU-sample stacks
// (one "[running]" frame when the trace has no samples) and runnable time
// as "[runnable]". Its total is the groups' wait sum plus running and
// runnable time.
func Wall(res *budget.Result, opts Options) (*profile.Profile, error) {
	gs, err := groups(res, opts)
	if err != nil {
		return nil, err
	}
	b := newBuilder(res, &opts, "wall", comment("wall-clock (on- and off-CPU) goroutine time inside requests", gs))
	for _, g := range gs {
		b.waits(g)
		b.running(g)
		b.add(g, []*profile.Location{b.pseudo(frame.Runnable)}, g.Runnable.Wait, frame.Runnable, nil)
	}
	return b.finish()
}

// OffCPU returns the off-CPU waits inside requests by blocking stack, each
// under a leaf naming its kind and labelled kind, mechanism and frame. Its
// total is the groups' Σ term waits.
func OffCPU(res *budget.Result, opts Options) (*profile.Profile, error) {
	gs, err := groups(res, opts)
	if err != nil {
		return nil, err
	}
	b := newBuilder(res, &opts, "offcpu", comment("off-CPU goroutine time inside requests, by blocking stack", gs))
	for _, g := range gs {
		b.waits(g)
	}
	return b.finish()
}

// Critical returns the requests' critical paths: critical waits under their
// request-side blocking stacks with the root cause as the leaf (for time
// spent in a goroutine outside the request, its state: "[network]",
// "[running]", …), plus the request goroutines' own "[running]",
// "[runnable]" and "[unknown]" critical time. Its total is the groups' Σ
// latency.
func Critical(res *budget.Result, opts Options) (*profile.Profile, error) {
	gs, err := groups(res, opts)
	if err != nil {
		return nil, err
	}
	b := newBuilder(res, &opts, "critical", comment("critical-path time of requests", gs))
	for _, g := range gs {
		for _, s := range g.StackWaits {
			a := b.attribution(s.Stack)
			b.add(g, b.stack(s.Stack, b.pseudo(s.Kind)), s.Critical, s.Kind, &a)
		}
		b.add(g, []*profile.Location{b.pseudo(frame.Running)}, g.Running.Critical, frame.Running, nil)
		b.add(g, []*profile.Location{b.pseudo(frame.Runnable)}, g.Runnable.Critical, frame.Runnable, nil)
		b.add(g, []*profile.Location{b.pseudo(kindUnknown)}, g.Unknown, kindUnknown, nil)
	}
	return b.finish()
}

// waits adds a group's off-CPU time by blocking stack.
func (b *builder) waits(g *budget.Group) {
	for _, s := range g.StackWaits {
		a := b.attribution(s.Stack)
		b.add(g, b.stack(s.Stack, b.pseudo(s.Kind)), s.Wait, s.Kind, &a)
	}
}

// running adds a group's running time over its CPU-sample stacks.
func (b *builder) running(g *budget.Group) {
	parts := split(g.Running.Wait, g.CPUStacks)
	if parts == nil {
		b.add(g, []*profile.Location{b.pseudo(frame.Running)}, g.Running.Wait, frame.Running, nil)
		return
	}
	for _, p := range parts {
		locs := b.stack(p.stack, nil)
		if len(locs) == 0 {
			locs = append(locs, b.pseudo(frame.Running))
		}
		b.add(g, locs, p.v, frame.Running, nil)
	}
}

// groups returns the groups an export covers.
func groups(res *budget.Result, opts Options) ([]*budget.Group, error) {
	if res == nil || res.Stacks == nil {
		return nil, fmt.Errorf("pprof export: no analysis result")
	}
	if opts.Task == "" {
		return res.Groups, nil
	}
	var names []string
	for _, g := range res.Groups {
		if g.Name == opts.Task {
			return []*budget.Group{g}, nil
		}
		names = append(names, g.Name)
	}
	return nil, fmt.Errorf("pprof export: %w", opterr.Wrap("task", fmt.Errorf("%q matches no request type (request types: %s)", opts.Task, strings.Join(names, ", "))))
}

// comment states what a profile holds and what its values are totals over.
func comment(what string, gs []*budget.Group) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = fmt.Sprintf("%q %d", g.Name, g.Count)
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	return fmt.Sprintf("latscope: %s; values are totals in ns over the requests (divide by the count for the mean per request): %s",
		what, strings.Join(parts, ", "))
}
