package pprofexport

import (
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// builder assembles one profile, interning functions and locations.
type builder struct {
	p     *profile.Profile
	res   *budget.Result
	rules *frame.Rules
	funcs map[funcKey]*profile.Function
	locs  map[locKey]*profile.Location
	attrs map[tracein.StackID]frame.Attribution
}

type funcKey struct{ name, file string }

type locKey struct {
	fn   *profile.Function
	line int64
}

func newBuilder(res *budget.Result, opts *Options, sampleType, comment string) *builder {
	vt := &profile.ValueType{Type: sampleType, Unit: "nanoseconds"}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{vt},
		PeriodType: &profile.ValueType{Type: sampleType, Unit: "nanoseconds"},
		Period:     1,
		Mapping:    []*profile.Mapping{{ID: 1, File: "latscope", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}},
		Comments:   []string{comment},
	}
	if d := res.Info.Duration(); d > 0 {
		p.DurationNanos = d
	}
	if !res.Info.StartWall.IsZero() {
		p.TimeNanos = res.Info.StartWall.UnixNano()
	}
	return &builder{p: p, res: res, rules: &opts.Rules, funcs: map[funcKey]*profile.Function{},
		locs: map[locKey]*profile.Location{}, attrs: map[tracein.StackID]frame.Attribution{}}
}

// location returns the location of one frame.
func (b *builder) location(name, file string, line int64) *profile.Location {
	fk := funcKey{name, file}
	fn := b.funcs[fk]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
		b.funcs[fk] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	lk := locKey{fn, line}
	loc := b.locs[lk]
	if loc == nil {
		loc = &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: b.p.Mapping[0], Line: []profile.Line{{Function: fn, Line: line}}}
		b.locs[lk] = loc
		b.p.Location = append(b.p.Location, loc)
	}
	return loc
}

// pseudo returns the location of a pseudo-frame such as "[running]".
func (b *builder) pseudo(k frame.Kind) *profile.Location {
	return b.location(pseudoName(k), "", 0)
}

// pseudoName names the pseudo-frame of a kind; unexplained critical-path
// time uses kindUnknown.
func pseudoName(k frame.Kind) string {
	if k == kindUnknown {
		return "[unknown]"
	}
	return "[" + k.String() + "]"
}

// kindUnknown marks unexplained critical-path time; it is not a frame.Kind.
const kindUnknown = frame.Kind(255)

// stack returns the locations of a trace stack, leaf first, optionally
// below a pseudo-frame leaf.
func (b *builder) stack(id tracein.StackID, leaf *profile.Location) []*profile.Location {
	frames := b.res.Stacks.Frames(id)
	out := make([]*profile.Location, 0, len(frames)+1)
	if leaf != nil {
		out = append(out, leaf)
	}
	for _, f := range frames {
		out = append(out, b.location(f.Func, f.File, int64(f.Line)))
	}
	return out
}

// attribution returns the application frame and mechanism of a stack.
func (b *builder) attribution(id tracein.StackID) frame.Attribution {
	a, ok := b.attrs[id]
	if !ok {
		frames := b.res.Stacks.Frames(id)
		funcs := make([]string, len(frames))
		files := make([]string, len(frames))
		for i, f := range frames {
			funcs[i], files[i] = f.Func, f.File
		}
		a = b.rules.DecideFiles(funcs, files)
		b.attrs[id] = a
	}
	return a
}

// add appends a sample of v nanoseconds; v ≤ 0 adds nothing.
func (b *builder) add(g *budget.Group, locs []*profile.Location, v int64, k frame.Kind, a *frame.Attribution) {
	if v <= 0 {
		return
	}
	s := &profile.Sample{Location: locs, Value: []int64{v},
		Label:    map[string][]string{"request": {g.Name}, "kind": {kindLabel(k)}},
		NumLabel: map[string][]int64{"requests": {int64(g.Count)}}}
	if a != nil {
		if a.App != "" {
			s.Label["frame"] = []string{a.App}
		}
		if a.Mechanism != "" {
			s.Label["mechanism"] = []string{a.Mechanism}
		}
	}
	b.p.Sample = append(b.p.Sample, s)
}

func kindLabel(k frame.Kind) string {
	if k == kindUnknown {
		return "unknown"
	}
	return k.String()
}

// finish checks the profile.
func (b *builder) finish() (*profile.Profile, error) {
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof %s profile: %w", b.p.SampleType[0].Type, err)
	}
	return b.p, nil
}
