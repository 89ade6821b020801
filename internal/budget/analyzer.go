package budget

import (
	"unsafe"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/gotable"
	"github.com/latscope/latscope/internal/tracein"
)

// Analyzer is the streaming analyser. Create it with New, feed it every
// record of one trace in order with Event, then call Finalize once.
type Analyzer struct {
	opts      Options
	terms     *terms
	gs        gotable.Table[gstate]
	open      map[tracein.TaskID]*reqState
	nested    map[tracein.TaskID]*reqState // open sub-tasks, by the request they are part of
	groups    map[string]*groupState
	info      TraceInfo
	outside   [frame.NumKinds]int64
	procs     pTimes // P → time it started running
	procBusy  int64
	share     procShare // the CPU samples against the Ps' running time
	inferring bool
	reasons   reasonKinds // kindOf's
	seenTask  bool
	spans     int // open inferred requests
	inf       inferState
	hist      []hseg
	follows   int // nested timelines still allowed for the wait being explained (maxFollows)
	scratch   scratch
	warnings  []error
	// regionNames interns region types; id 0 is "no region".
	regionNames []string
	regionIndex map[string]int32
	free        freeLists
	freeG       []*gstate // states of exited goroutines, for reuse
	// rpcPending are requests whose transport time after them waits for
	// their connection writer's next write, by connection (transport.go).
	rpcPending map[tracein.GoID][]transportPending
	// uncountedRPC counts grpc-go handler goroutines started in the trace
	// that ended without ever being part of a request.
	uncountedRPC int
	// cpu splits running time by frame (cpu.go); cur is the record being
	// consumed, whose stack ends a running interval that it cuts.
	cpu cpuFrames
	cur *tracein.Event
	// pending are the finished requests not booked yet, in the order they
	// ended, from index settled on (finish, settle).
	pending []*reqState
	settled int
	spare   []timelineBufs // booked requests' timeline buffers, for reuse
	// spareBorrowed are booked requests' borrowed timelines' arrays, and
	// spareBorrows their lists, for reuse (borrow, settle)
	spareBorrowed [][]critpath.Seg
	spareBorrows  [][]critpath.Borrowed
	// begun are the tasks the trace saw begin (requests and sub-tasks);
	// orphans those whose parent it did not (pieces of requests it cut,
	// and their sub-tasks). cutRoute is the latscope.route log of a task begun
	// before the trace, for its end; renamedFrom the task names a route
	// log replaced.
	begun       map[tracein.TaskID]struct{}
	orphans     map[tracein.TaskID]struct{}
	cutRoute    map[tracein.TaskID]string
	renamedFrom map[string]bool
	// traceWant is Options.TraceID parsed (traceOK: it parsed); traceErr
	// its error.
	traceWant TraceID
	traceOK   bool
	traceErr  error
	matched   int // requests booked that carry traceWant
}

// regionID interns a region type.
func (a *Analyzer) regionID(name string) int32 {
	if id, ok := a.regionIndex[name]; ok {
		return id
	}
	id := int32(len(a.regionNames))
	a.regionNames = append(a.regionNames, name)
	a.regionIndex[name] = id
	return id
}

// New returns an analyser; stacks is the table that the records' StackIDs
// index (tracein.Reader.Stacks).
func New(opts Options, stacks *tracein.Stacks) *Analyzer {
	a := &Analyzer{
		opts:   opts,
		open:   map[tracein.TaskID]*reqState{},
		nested: map[tracein.TaskID]*reqState{},
		groups: map[string]*groupState{},

		begun:       map[tracein.TaskID]struct{}{},
		orphans:     map[tracein.TaskID]struct{}{},
		cutRoute:    map[tracein.TaskID]string{},
		renamedFrom: map[string]bool{},
	}
	if opts.TraceID != "" {
		a.traceWant, a.traceErr = ParseTraceID(opts.TraceID)
		a.traceOK = a.traceErr == nil
	}
	a.terms = newTerms(&a.opts.Rules, stacks)
	a.regionNames, a.regionIndex = []string{""}, map[string]int32{"": 0}
	a.inferring = opts.Infer != InferTasks
	a.scratch.init()
	return a
}

// Events consumes records, in order (Event's work, in the loop: a call
// per record less).
func (a *Analyzer) Events(recs []tracein.Event) {
	for i := range recs {
		ev := &recs[i]
		a.clock(ev)
		a.cur = ev
		switch ev.Kind {
		case tracein.KindGoState:
			a.goState(ev)
		case tracein.KindTaskBegin:
			a.taskBegin(ev)
		case tracein.KindTaskEnd:
			a.taskEnd(ev)
		case tracein.KindRegionBegin:
			a.regionBegin(ev)
		case tracein.KindRegionEnd:
			a.regionEnd(ev)
		case tracein.KindLog:
			a.log(ev)
		case tracein.KindSample:
			a.sample(ev)
		case tracein.KindProcState:
			a.procState(ev)
		case tracein.KindSync:
			a.info.Generations++
			if a.info.StartWall.IsZero() && !ev.Wall.IsZero() {
				a.info.StartWall = ev.Wall.Add(-ev.Time.Sub(a.info.Start))
			}
		}
		a.cur = nil
	}
}

// Event consumes one record.
func (a *Analyzer) Event(ev *tracein.Event) { a.Events(unsafe.Slice(ev, 1)) }

func (a *Analyzer) clock(ev *tracein.Event) {
	if a.info.Records == 0 {
		a.info.Start = ev.Time
	}
	a.info.Records++
	if ev.Time > a.info.End {
		a.info.End = ev.Time
	}
}

// g returns the state of goroutine id, creating it.
func (a *Analyzer) g(id tracein.GoID) *gstate {
	g, ok := a.gs.Lookup(id)
	if !ok {
		g = a.gs.Get(id)
	}
	if g == nil {
		if n := len(a.freeG); n > 0 {
			g, a.freeG = a.freeG[n-1], a.freeG[:n-1]
			g.gvars = gvars{id: id, term: critpath.NoTerm, saved: g.saved[:0], regions: g.regions[:0], cpu: g.cpu[:0], conn: tracein.NoGoroutine, writer: tracein.NoGoroutine, creator: tracein.NoGoroutine}
		} else {
			g = &gstate{gvars: gvars{id: id, term: critpath.NoTerm, conn: tracein.NoGoroutine, writer: tracein.NoGoroutine, creator: tracein.NoGoroutine}}
		}
		a.gs.Set(id, g)
		a.info.Goroutines++
	}
	return g
}

func (a *Analyzer) goState(ev *tracein.Event) {
	if ev.From == tracein.Syscall || ev.To == tracein.Syscall {
		_, running := a.procs.get(ev.Proc)
		a.share.syscalls.goState(ev, running)
	}
	if ev.From == ev.To {
		return // a status restated at a generation boundary
	}
	t := ev.Time
	g, ok := a.gs.Lookup(ev.G) // a.g's answer without its call, for a goroutine known
	if !ok || g == nil {
		g = a.g(ev.G)
	}
	switch {
	case ev.From == tracein.NotExist && ev.To == tracein.Runnable:
		a.created(g, ev)
		return
	case ev.From == tracein.Undetermined:
		if g.state == ev.To && g.state != tracein.Undetermined {
			return // re-stated at a generation boundary
		}
		if g.state != tracein.Undetermined {
			a.record(g, g.since, t, tracein.NoGoroutine, ev.Stack)
		}
		a.resumeAt(g, ev.Stack)
		a.setState(g, ev, t)
		a.inferInitial(g, ev)
		return
	}
	if rpcTransports(ev) {
		a.rpcTransport(g, ev)
	}
	if g.state != tracein.Undetermined {
		waker := tracein.NoGoroutine
		if ev.From == tracein.Waiting && ev.To == tracein.Runnable {
			waker = ev.Actor
		}
		a.record(g, g.since, t, waker, ev.Stack)
		g.since = t
	}
	a.resumeAt(g, ev.Stack)
	if a.inferring { // (inferTransition's first test, without the call)
		a.inferTransition(g, ev)
	}
	if ev.To == tracein.NotExist {
		a.ended(g, t)
		return
	}
	a.setState(g, ev, t)
}

// resumeAt notes where g's next running time begins: the stack of the
// transition that stopped it (or of its creation), when it has one.
func (a *Analyzer) resumeAt(g *gstate, st tracein.StackID) {
	if st != tracein.NoStack {
		g.resume = st
	}
}

// setState starts g's next interval.
func (a *Analyzer) setState(g *gstate, ev *tracein.Event, t tracein.Time) {
	g.state, g.since = ev.To, t
	g.kind = kindOf(ev.To, ev.Reason, &a.reasons)
	g.term, g.stack = critpath.NoTerm, tracein.NoStack
	if g.kind.IsWait() {
		// terms.term's answer for a stack that has it, without the call
		if si := a.terms.stack(ev.Stack); si.hasTerm && si.termKind == g.kind {
			g.term = si.termID
		} else {
			g.term = a.terms.term(ev.Stack, g.kind)
		}
		g.stack = ev.Stack
	}
}

// created handles NotExist→Runnable: the creator's open request adopts the
// child tentatively (its time counts only if it ends inside the request).
func (a *Analyzer) created(g *gstate, ev *tracein.Event) {
	g.gvars = gvars{id: g.id, state: tracein.Runnable, since: ev.Time, kind: frame.Runnable, term: critpath.NoTerm, conn: tracein.NoGoroutine, writer: tracein.NoGoroutine,
		resume: ev.Stack, cpu: g.cpu[:0], creator: ev.Actor}
	a.rpcTransport(g, ev)
	if c := a.gs.Get(ev.Actor); c != nil && c.req != nil && ev.Actor != g.id && a.terms.stack(ev.Stack).flags&(flagNoAdopt|flagTransport) == 0 {
		a.join(g, c.req, ev.Time, c.mi, true)
	}
	a.inferCreated(g, ev)
}

// ended handles a goroutine's exit.
func (a *Analyzer) ended(g *gstate, t tracein.Time) {
	if g.rpcg && !g.inReq {
		a.uncountedRPC++
	}
	a.leave(g, t, true)
	for g.req != nil {
		a.leave(g, t, true)
	}
	a.gs.Delete(g.id)
	if len(a.freeG) < maxFreeG {
		a.freeG = append(a.freeG, g)
	}
}

// maxFreeG bounds the exited goroutines' states kept for reuse.
const maxFreeG = 4096

// split closes g's current interval at t without a state change. When the
// record being consumed is g's own (a task, region or log event), its stack
// is where running time is cut.
func (a *Analyzer) split(g *gstate, t tracein.Time) {
	if g.state == tracein.Undetermined || g.state == tracein.NotExist || t <= g.since {
		return
	}
	at := tracein.NoStack
	if a.cur != nil && a.cur.G == g.id && a.cur.Kind != tracein.KindGoState {
		at = a.cur.Stack
	}
	a.record(g, g.since, t, tracein.NoGoroutine, at)
	g.since = t
	if at != tracein.NoStack {
		g.resume = at
	}
}

// record books the interval [start, end) of g's current kind; stop is the
// stack where it ended, when known.
func (a *Analyzer) record(g *gstate, start, end tracein.Time, waker tracein.GoID, stop tracein.StackID) {
	if end <= start {
		return
	}
	g.push(start, end, waker)
	if g.kind == frame.Running {
		a.foldCPU(g, start, end, stop)
	}
	r := g.req
	if r == nil {
		a.outside[g.kind] += int64(end - start)
		return
	}
	m := g.m
	s := critpath.Seg{Start: max(start, g.joined), End: end, Kind: g.kind, Term: g.term, Stack: g.stack, Waker: -1, Borrow: -1}
	if s.End <= s.Start {
		return
	}
	if g.kind == frame.Running { // split by frame when the request is booked (cpu.go)
		m.g.Segs = append(m.g.Segs, s)
		m.regions = append(m.regions, g.regionID())
		m.runs = append(m.runs, runRef{seg: int32(len(m.g.Segs) - 1), resume: g.resume, stop: stop})
		return
	}
	if waker != tracein.NoGoroutine && waker != g.id && g.kind.IsWait() {
		a.resolveWaker(&s, r, waker, start, end)
		s.JoinAll = s.Waker >= 0 && a.terms.stack(g.stack).flags&flagJoinAll != 0
	}
	m.g.Segs = append(m.g.Segs, s)
	m.regions = append(m.regions, g.regionID())
}

// resolveWaker fills in who ended a wait of request r: a goroutine of the
// same request (a join), another request (contention), or a goroutine of no
// request whose recent timeline is borrowed to explain the wait.
func (a *Analyzer) resolveWaker(s *critpath.Seg, r *reqState, waker tracein.GoID, waitStart, t tracein.Time) {
	w := a.gs.Get(waker)
	switch {
	case w == nil:
	case w.req == r:
		s.Waker = w.mi
	case w.req != nil && !w.req.members[w.mi].tentative:
		s.Contention = true
	default:
		a.follows = maxFollows
		s.Borrow = a.borrow(r, w, waitStart, t, 1)
	}
}

// maxFollows bounds the timelines copied to explain one wait through
// hand-offs: each goroutine's remembered history has up to 17 intervals,
// so without a bound a chain of 4 could copy thousands.
const maxFollows = 16

// borrow copies w's timeline over [lb, ub] into r. A wait of w's that
// another goroutine of no request ended (w is an apply loop, its waker the
// raft loop that had just synced the disk) gets that goroutine's timeline
// over the wait in turn, up to critpath.MaxHops goroutines from the
// request (depth is w's place in the chain, 1 for the goroutine that ended
// the request's wait).
func (a *Analyzer) borrow(r *reqState, w *gstate, lb, ub tracein.Time, depth int) int32 {
	hist := w.history(lb, a.hist[:0])
	b := critpath.Borrowed{ID: w.id, Segs: a.borrowedSegs(len(hist) + 1)}
	type follow struct {
		seg        int // index in b.Segs
		start, end tracein.Time
		waker      tracein.GoID
	}
	var next []follow // waits ended by goroutines outside the request
	add := func(h hseg) {
		s := critpath.Seg{Start: max(h.start, lb), End: min(h.end, ub), Kind: h.kind, Term: critpath.NoTerm, Waker: -1, Borrow: -1}
		if s.End <= s.Start {
			return
		}
		if h.kind.IsWait() {
			s.Stack = h.stack
		}
		if h.kind.IsWait() && h.waker != tracein.NoGoroutine {
			s.Waker = memberOf(a.gs.Get(h.waker), r)
			if s.Waker < 0 && h.waker != w.id && depth < critpath.MaxHops {
				next = append(next, follow{seg: len(b.Segs), start: s.Start, end: s.End, waker: h.waker})
			}
		}
		b.Segs = append(b.Segs, s)
	}
	for _, h := range hist {
		add(h)
	}
	if w.state != tracein.Undetermined {
		add(hseg{start: w.since, end: ub, kind: w.kind, waker: tracein.NoGoroutine, stack: w.stack})
	}
	a.hist = hist[:0]
	if r.borrows == nil && len(a.spareBorrows) > 0 {
		r.borrows = a.spareBorrows[len(a.spareBorrows)-1]
		a.spareBorrows = a.spareBorrows[:len(a.spareBorrows)-1]
	}
	r.borrows = append(r.borrows, b)
	id := int32(len(r.borrows) - 1)
	for _, h := range next {
		if x := a.gs.Get(h.waker); x != nil && x.req == nil && a.follows > 0 {
			a.follows--
			r.borrows[id].Segs[h.seg].Borrow = a.borrow(r, x, h.start, h.end, depth+1)
		}
	}
	return id
}

func (a *Analyzer) sample(ev *tracein.Event) {
	a.info.CPUSamples++
	g := a.gs.Get(ev.G)
	a.share.sample(ev, a.shareBusy(ev.Time), g != nil && g.state == tracein.Syscall)
	if !a.opts.StacksOnly {
		a.cpuSample(g, ev)
	}
	if g != nil && g.rpc != nil && !g.rpc.gen && a.inferring {
		a.rpcSeen(g, ev.Stack) // a handler that never blocks shows its method in samples
	}
	if g == nil || g.req == nil {
		return
	}
	g.req.samples++
	if g.req.regionCPU == nil {
		g.req.regionCPU = map[int32]int{}
		g.req.stackCPU = map[tracein.StackID]int{}
	}
	g.req.regionCPU[g.regionID()]++
	g.req.stackCPU[ev.Stack]++
}

func (a *Analyzer) procState(ev *tracein.Event) {
	if ev.Proc+1 > int64(a.info.Procs) {
		a.info.Procs = int(ev.Proc + 1)
	}
	if ev.To == tracein.Running {
		a.procs.put(ev.Proc, ev.Time)
		return
	}
	a.share.syscalls.release(ev.Proc, ev.Time) // the P taken from a goroutine in a system call
	if start, ok := a.procs.take(ev.Proc); ok {
		a.procBusy += int64(ev.Time - start)
	}
}
