package budget

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// CPU by frame (docs/method.md §3, "CPU by frame"). A request goroutine's
// running time is split by the application frame it ran in, the rule of the
// wait terms (innermost application frame, with its call path) applied to
// the stacks of CPU samples: a CPU term is (call path, kind running).
//
// Each sample stands for CPUSamplePeriod of CPU in its frame. A CPU profile
// samples at 100 Hz, so a request of a few milliseconds of CPU rarely holds
// a sample of its own, and charging a sample's whole period to the request
// it fell in would give most requests nothing and a few too much. The
// samples are pooled instead by the place in the code the running time lies
// between: its context, the places of the stacks where the goroutine
// resumed (the wait, syscall or preemption it came out of, its creation, or
// a task or region event) and where it stopped. Each running interval of a
// context is split by the context's samples so far (its own included): a
// frame with n of them gets the share n × period / the context's running
// time so far, the shares in the order the samples fall in. They never add
// up to more than the interval (never more CPU than the running time the
// trace measured); what they leave is plain running time: CPU in no
// application frame, and time Go counted as running while the kernel ran
// something else (method.md §12), which no sample sees. A context with no
// sample yet keeps its running time plain.
//
// A trace without CPU samples, or a context without any, takes the frame
// the goroutine was in all along from the stacks at the interval's two ends:
// the innermost application frame of the frames both stacks share (the same
// function, called from the same lines). It is an estimate that names only
// frames that stayed on the stack, so it never names a function that
// returned between the two ends (a handler's CPU-bound helper that never
// blocks): that time stays plain running time.

// CPUSamplePeriod is the CPU time a CPU sample stands for: runtime/pprof's
// rate of 100 Hz, which latscope capture, net/http/pprof's profile and go
// test -cpuprofile use. The trace does not record the rate; a profile taken
// at another rate (runtime.SetCPUProfileRate) scales every CPU term by
// this period over its own.
const CPUSamplePeriod = 10 * time.Millisecond

// cpuSample is a CPU sample taken while its goroutine was running, kept
// until the running interval ends.
type cpuSample struct {
	t    tracein.Time
	term critpath.TermID // NoTerm: no application frame
}

// ctxKey is a context: the sites where the running time began and ended.
type ctxKey struct{ resume, stop int32 }

// cpuCtx pools the CPU samples of one context and its running time.
type cpuCtx struct {
	n     int
	run   int64     // running time of the context's intervals, ns
	terms []ctxTerm // by first appearance; few per context
	// order is terms in the order runningPieces lays them out, valid
	// when ordered: sorted again only after foldCPU added samples, not for
	// every running segment booked.
	order   []ctxTerm
	ordered bool
}

// ctxTerm is one frame's samples in a context, with the sum of their
// positions in their running intervals (0 at the start, 1 at the end).
type ctxTerm struct {
	term critpath.TermID
	n    int
	pos  float64
}

// cpuFrames is the analyser's state for CPU by frame.
type cpuFrames struct {
	ctx     map[ctxKey]*cpuCtx
	recent  [1 << 10]recentCtx // a cache of ctx (lookup), by a slot the key picks
	samples int                // CPU samples that fell in a goroutine's running time
	// sites, by StackID: each stack's site (terms.site) once asked, in a
	// small array of its own: two per running interval ended and two per
	// running segment booked, each a pass through the stack's whole
	// stackInfo before.
	sites []knownSite
	// stops, by StackID: what preempted found of the stack's CPU term.
	stops []stopCPU
}

// recentCtx is a slot of cpuFrames.recent: a context and its pool.
type recentCtx struct {
	k ctxKey
	c *cpuCtx
}

// slot returns the slot of cpuFrames.recent that k takes.
func (k ctxKey) slot() uint32 {
	return (uint32(k.resume)*0x9E3779B1 ^ uint32(k.stop)*0x85EBCA77) >> 22
}

// lookup returns the pool of context k, or nil: a map lookup per running
// interval (foldCPU) and per running segment booked (runningPieces) was a
// third of foldCPU's time on a dense trace; a context's slot is checked
// first, the map only when the slot holds another.
func (f *cpuFrames) lookup(k ctxKey) *cpuCtx {
	r := &f.recent[k.slot()]
	if r.c != nil && r.k == k {
		return r.c
	}
	c := f.ctx[k]
	if c != nil {
		*r = recentCtx{k, c}
	}
	return c
}

// knownSite is a stack's site, valid when known.
type knownSite struct {
	site  int32
	known bool
}

// ctxOf returns the context of running time that began at stack resume
// and ended at stop: their sites, both read here when known (one call
// where two calls of site were made per running interval and segment).
func (a *Analyzer) ctxOf(resume, stop tracein.StackID) ctxKey {
	if s := a.cpu.sites; int(resume) < len(s) && int(stop) < len(s) && s[resume].known && s[stop].known {
		return ctxKey{s[resume].site, s[stop].site}
	}
	return ctxKey{a.site(resume), a.site(stop)}
}

// site is terms.site, remembered in cpuFrames.sites.
func (a *Analyzer) site(id tracein.StackID) int32 {
	if int(id) < len(a.cpu.sites) && a.cpu.sites[id].known {
		return a.cpu.sites[id].site
	}
	s := a.terms.site(id)
	if int(id) >= len(a.cpu.sites) {
		a.cpu.sites = append(a.cpu.sites, make([]knownSite, max(int(id)+1, 2*len(a.cpu.sites))-len(a.cpu.sites))...)
	}
	a.cpu.sites[id] = knownSite{s, true}
	return s
}

// site returns the place in the code that a stack stands for: its
// application frames with the lines they called from, the innermost
// without its own line, so that preemptions at any line of a CPU-bound
// function are one place while two calls of a helper from two lines are
// two; a stack without an application frame stands for itself. 0 is
// unknown (no stack: a goroutine's exit, or a cut by another goroutine's
// event).
func (t *terms) site(id tracein.StackID) int32 {
	if id == tracein.NoStack {
		return 0
	}
	si := t.stack(id)
	if si.hasSite {
		return si.site
	}
	si.hasSite = true
	if si.attr.App == "" {
		si.site = -int32(id)
		return si.site
	}
	var b strings.Builder
	inner := true
	for _, f := range t.stacks.Frames(id) { // leaf first: the key is read backwards, which is as unique
		if !t.rules.IsAppFrame(f.Func, f.File, si.attr.Fallback) {
			continue
		}
		b.WriteString(f.Func)
		if !inner {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(f.Line, 10))
		}
		b.WriteByte('\n')
		inner = false
	}
	k := b.String()
	s, ok := t.sites[k]
	if !ok {
		s = int32(len(t.sites) + 1)
		t.sites[k] = s
	}
	si.site = s
	return s
}

// cpuTerm returns the CPU term of a sample's stack: its application call
// path, kind running; NoTerm when the stack has no application frame.
func (t *terms) cpuTerm(id tracein.StackID) critpath.TermID {
	si := t.stack(id)
	if si.hasCPU {
		return si.cpuID
	}
	si.hasCPU, si.cpuID = true, critpath.NoTerm
	if si.attr.App != "" {
		si.cpuID = t.intern(Term{Frame: si.attr.App, Path: si.path, Kind: frame.Running, Fallback: si.attr.Fallback}, si.pathKey)
	}
	return si.cpuID
}

// spanTerm returns the CPU term of running time that began at stack a and
// ended at stack b, from the frames both share: the same functions called
// from the same lines, from the outermost in, down to the first frame whose
// line differs (it was running throughout, at other lines). NoTerm when
// they share no application frame. A missing stack (a goroutine's exit)
// shares the other's outermost frame: the goroutine's function.
func (t *terms) spanTerm(a, b tracein.StackID) critpath.TermID {
	key := [2]tracein.StackID{a, b}
	if id, ok := t.spans[key]; ok {
		return id
	}
	id := t.span(t.stacks.Frames(a), t.stacks.Frames(b))
	t.spans[key] = id
	return id
}

func (t *terms) span(fa, fb []tracein.Frame) critpath.TermID {
	var common []tracein.Frame // leaf first
	switch {
	case len(fa) == 0 && len(fb) == 0:
		return critpath.NoTerm
	case len(fa) == 0:
		common = fb[len(fb)-1:]
	case len(fb) == 0:
		common = fa[len(fa)-1:]
	default:
		n := 0
		for n < len(fa) && n < len(fb) {
			x, y := fa[len(fa)-1-n], fb[len(fb)-1-n]
			if x.Func != y.Func {
				break
			}
			n++
			if x.Line != y.Line {
				break
			}
		}
		common = fa[len(fa)-n:]
	}
	if len(common) == 0 {
		return critpath.NoTerm
	}
	t.funcs, t.files, t.apps = t.funcs[:0], t.files[:0], t.apps[:0]
	for _, f := range common {
		t.funcs = append(t.funcs, f.Func)
		t.files = append(t.files, f.File)
	}
	attr := t.rules.DecideFiles(t.funcs, t.files)
	if attr.App == "" {
		return critpath.NoTerm
	}
	for _, f := range common {
		if t.rules.IsAppFrame(f.Func, f.File, attr.Fallback) {
			if n := len(t.apps); n == 0 || t.apps[n-1] != f.Func {
				t.apps = append(t.apps, f.Func)
			}
		}
	}
	path, key := t.internPath(attr.App)
	return t.intern(Term{Frame: attr.App, Path: path, Kind: frame.Running, Fallback: attr.Fallback, Beneath: true}, key)
}

// cpuSample keeps a CPU sample of goroutine g, when it is running, for the
// running interval it falls in.
func (a *Analyzer) cpuSample(g *gstate, ev *tracein.Event) {
	if g == nil || g.state != tracein.Running || ev.Time < g.since {
		return
	}
	g.cpu = append(g.cpu, cpuSample{t: ev.Time, term: a.terms.cpuTerm(ev.Stack)})
}

// foldCPU adds g's running interval [start, end), which ended at stack
// stop, and the samples kept for it to its context (from the trace's first
// sample on).
func (a *Analyzer) foldCPU(g *gstate, start, end tracein.Time, stop tracein.StackID) {
	if len(g.cpu) == 0 && a.cpu.samples == 0 {
		return // no sample in the trace so far
	}
	k := a.ctxOf(g.resume, stop)
	c := a.cpu.lookup(k)
	if c == nil {
		if a.cpu.ctx == nil {
			a.cpu.ctx = map[ctxKey]*cpuCtx{}
		}
		c = &cpuCtx{}
		a.cpu.ctx[k] = c
		a.cpu.recent[k.slot()] = recentCtx{k, c}
	}
	c.run += int64(end - start)
	span := float64(end - start)
	for _, s := range g.cpu {
		pos := 0.5
		if span > 0 {
			pos = min(max(float64(s.t-start)/span, 0), 1)
		}
		i := slices.IndexFunc(c.terms, func(ct ctxTerm) bool { return ct.term == s.term })
		if i < 0 {
			c.terms = append(c.terms, ctxTerm{term: s.term})
			i = len(c.terms) - 1
		}
		c.terms[i].n++
		c.terms[i].pos += pos
		c.n++
		c.ordered = false
		a.cpu.samples++
	}
	g.cpu = g.cpu[:0]
}

// runRef is a running segment of a request goroutine, with the stacks its
// running interval began and ended at, to be split by frame when the
// request is booked.
type runRef struct {
	seg          int32 // index in the member's segments; in reqState.segs once finished
	resume, stop tracein.StackID
}

// splitRunning returns finished request r's timelines with its running
// segments split by frame, and the innermost region of each segment, by
// goroutine (settle); both are scratch memory.
func (a *Analyzer) splitRunning(r *reqState) ([]critpath.G, [][]int32) {
	segs, regions := a.scratch.segs[:0], a.scratch.regions[:0]
	gs, regs := a.scratch.gs[:0], a.scratch.regs[:0]
	off, ri := 0, 0
	for _, g := range r.gs {
		start := len(segs)
		// A preemption inside a frame's CPU (preempted below): the frame
		// the last running interval was preempted in, and the first of
		// the runnable segments since, in segs (-1: none).
		preempted, pend := critpath.NoTerm, -1
		for j := range g.Segs {
			k := off + j
			s := &g.Segs[j]
			if ri < len(r.runs) && int(r.runs[ri].seg) == k {
				n := len(segs)
				segs = a.runningPieces(segs, *s, r.runs[ri])
				for range len(segs) - n {
					regions = append(regions, r.regs[k])
				}
				if pend >= 0 && segs[n-1].End == s.Start && hasTerm(segs[n:], preempted) {
					for i := pend; i < n; i++ {
						segs[i].SetAlong(preempted)
					}
				}
				preempted, pend = a.preempted(segs[n:], r.runs[ri]), -1
				ri++
				continue
			}
			switch {
			case preempted == critpath.NoTerm:
			case s.Kind == frame.Runnable && s.Term == critpath.NoTerm && segs[len(segs)-1].End == s.Start:
				if pend < 0 {
					pend = len(segs)
				}
			default:
				preempted, pend = critpath.NoTerm, -1
			}
			segs, regions = append(segs, *s), append(regions, r.regs[k])
		}
		off += len(g.Segs)
		g.Segs = segs[start:len(segs):len(segs)]
		gs = append(gs, g)
		regs = append(regs, regions[start:len(regions):len(regions)])
	}
	// (A goroutine's slice taken before an append grew the arrays points
	// into the old array, which still holds its segments.)
	a.scratch.segs, a.scratch.regions = segs, regions
	return gs, regs
}

// preempted returns the CPU term of the frame a running interval, split
// into pieces, was preempted in, when the runnable time after it goes along
// with that term (docs/method.md §3, "CPU by frame"): the interval ended
// at a stack whose innermost application frame's CPU term the samples saw
// in the interval (pieces, as its CPU or going along with it). NoTerm
// otherwise: no CPU sample in the trace, a frame no sample saw there, or
// an interval that did not end in running code — a wait or syscall ends
// in a different state, and the runnable time after a block is a wakeup's
// wait, never along. splitRunning gives the runnable time that follows
// the term only when the goroutine runs the term again right after it.
func (a *Analyzer) preempted(pieces []critpath.Seg, run runRef) critpath.TermID {
	if a.cpu.samples == 0 || run.stop == tracein.NoStack {
		return critpath.NoTerm
	}
	// The CPU term a sample on the stop stack would get, without interning
	// one no sample gave.
	t, ok := a.cpu.stopTerm(run.stop, len(a.terms.list))
	if !ok {
		si := a.terms.stack(run.stop)
		t = si.cpuID
		if !si.hasCPU {
			if si.attr.App == "" { // no application frame, for good
				a.cpu.setStop(run.stop, stopCPU{t: critpath.NoTerm, known: true})
				return critpath.NoTerm
			}
			if t, ok = a.terms.index[termKey{path: si.pathKey, kind: frame.Running, fallback: si.attr.Fallback}]; !ok {
				a.cpu.setStop(run.stop, stopCPU{missedAt: int32(len(a.terms.list)) + 1})
				return critpath.NoTerm
			}
			// Interned: cpuTerm would intern the same key and find it,
			// so the stack's CPU term is known from now on.
			si.hasCPU, si.cpuID = true, t
		}
		a.cpu.setStop(run.stop, stopCPU{t: t, known: true})
	}
	if t == critpath.NoTerm || !hasTerm(pieces, t) {
		return critpath.NoTerm
	}
	return t
}

// stopCPU is what preempted found of a stop stack's CPU term: the term
// (NoTerm: the stack has no application frame), when known; else, when
// missedAt is not 0, that it was not interned when the term table had
// missedAt-1 terms.
type stopCPU struct {
	t        critpath.TermID
	known    bool
	missedAt int32
}

// stopTerm returns the CPU term of stop stack id and true when preempted
// found it before, or NoTerm and true when it found it not interned and
// the term table still has the n terms it had then (a term once interned
// stays, so it still is not); false when it must look. A map lookup of
// the term's key per running interval booked was a third of
// splitRunning's time on a dense trace, and the stack's whole stackInfo
// a read per interval.
func (f *cpuFrames) stopTerm(id tracein.StackID, n int) (critpath.TermID, bool) {
	if int(id) >= len(f.stops) {
		return critpath.NoTerm, false
	}
	switch s := f.stops[id]; {
	case s.known:
		return s.t, true
	case s.missedAt == int32(n)+1:
		return critpath.NoTerm, true
	}
	return critpath.NoTerm, false
}

// setStop remembers what preempted found of stop stack id (stopTerm).
func (f *cpuFrames) setStop(id tracein.StackID, s stopCPU) {
	if int(id) >= len(f.stops) {
		f.stops = append(f.stops, make([]stopCPU, max(int(id)+1, 2*len(f.stops))-len(f.stops))...)
	}
	f.stops[id] = s
}

// hasTerm reports whether a running interval's pieces hold CPU term t, as
// a piece's CPU from samples or as the term a piece goes along with.
func hasTerm(pieces []critpath.Seg, t critpath.TermID) bool {
	for i := range pieces {
		p := &pieces[i]
		if (p.From == critpath.CPUSamples && p.CPU == t) || p.Along() == t {
			return true
		}
	}
	return false
}

// runningPieces appends running segment s, split by frame, to segs: by the
// samples of its context, in the order they fall in, the rest plain; else
// one piece, with the frame the stacks at its two ends share, or none.
func (a *Analyzer) runningPieces(segs []critpath.Seg, s critpath.Seg, run runRef) []critpath.Seg {
	var c *cpuCtx
	if a.cpu.samples > 0 {
		c = a.cpu.lookup(a.ctxOf(run.resume, run.stop))
	}
	if c == nil || c.n == 0 || c.run <= 0 {
		if s.CPU = a.terms.spanTerm(run.resume, run.stop); s.CPU != critpath.NoTerm {
			s.From = critpath.CPUStacks
		}
		return append(segs, s)
	}
	if !c.ordered {
		c.order = append(c.order[:0], c.terms...)
		slices.SortStableFunc(c.order, func(x, y ctxTerm) int {
			px, py := x.pos/float64(x.n), y.pos/float64(y.n)
			switch {
			case px < py:
				return -1
			case px > py:
				return 1
			}
			return 0
		})
		c.ordered = true
	}
	order := c.order
	// The share of the interval each sample stands for; all of it when
	// the samples stand for more CPU than the context ran.
	per := float64(CPUSamplePeriod) / float64(c.run)
	if float64(c.n)*per > 1 {
		per = 1 / float64(c.n)
	}
	dur := float64(s.End - s.Start)
	begin, cum := s.Start, 0
	// add appends the piece from begin to end, the CPU of term (NoTerm:
	// plain running, going along with the term along, or with none).
	add := func(end tracein.Time, term, along critpath.TermID) {
		if end <= begin {
			return
		}
		p := s
		p.Start, p.End, p.CPU, p.From = begin, end, term, critpath.CPUNone
		if term != critpath.NoTerm {
			p.From = critpath.CPUSamples
		}
		p.SetAlong(along)
		segs = append(segs, p)
		begin = end
	}
	for _, ct := range order {
		cum += ct.n
		add(min(s.Start+tracein.Time(dur*float64(cum)*per), s.End), ct.term, critpath.NoTerm)
	}
	// The rest no sample saw: time Go counted as running while the kernel
	// ran another thread (a busy host), or the samples' rounding. It stays
	// plain running, shared among the sampled terms in proportion to their
	// samples, each piece going along with its term (critpath.Seg.Along):
	// under processor sharing a burst of CPU stretches by the same factor
	// whichever frame runs it, so a what-if that scales a term's CPU scales
	// its share of the stretch too. The share of samples without a term
	// goes along with none.
	rest := float64(s.End - begin)
	for _, ct := range order {
		if ct.term == critpath.NoTerm {
			continue
		}
		d := min(tracein.Time(rest*float64(ct.n)/float64(c.n)), s.End-begin)
		add(begin+d, critpath.NoTerm, ct.term)
	}
	add(s.End, critpath.NoTerm, critpath.NoTerm) // no sample saw it: off CPU, or the rounding
	return segs
}
