package budget

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// Inferred requests (no runtime/trace tasks) follow net/http's server
// connection goroutine, (*conn).serve, which for each request on a
// connection reads it (readRequest; on keep-alive connections after a
// bufio Peek that waits for the next request's first bytes), starts a
// background read goroutine ((*connReader).startBackgroundRead), runs the
// handler, and writes the response ((*response).finishRequest flushes it,
// then abortPendingRead waits for the background read to stop).
//
// The trace records stacks only at state transitions, so a request boundary
// that does not block is invisible to block events alone: two back-to-back
// keep-alive requests then look like one. But every request leaves marks
// that carry a stack whether or not anything blocks, in every trace format
// from Go 1.19 to 1.26 (docs/accuracy.md shows them per server):
//
//   - the read syscall of the next request (under Peek or readRequest);
//   - the creation of the background-read goroutine (once per request
//     after its header was read; for a request with a body, when the
//     handler has read it to the end);
//   - the write syscall under finishRequest that sends the response's
//     last bytes.
//
// A request begins when the connection goroutine is created, wakes from
// waiting for the next request, or issues the read syscall for it without
// having waited; it ends when that response write begins (its return
// waits for the thread to run again; the client can have the bytes
// before), or else when the goroutine waits in abortPendingRead, blocks
// for the next request, reads it, or exits — whichever comes first. A
// second background read in one span splits it. Requests in flight at the
// trace's start are counted as begun before it, open ones at its end as
// not ended, in their handler's group (inferFinalize).

// servePhase is where a connection goroutine is between and inside requests.
type servePhase uint8

const (
	phUnknown servePhase = iota // seen first mid-request or between: not decided yet
	phIdle                      // between requests (blocked is set while it waits for bytes)
	phOpen                      // inside a request of this trace: span is set
	phCut                       // inside a request that began before the trace
)

// How an inferred request began and ended, for the finding.
const (
	beganCreate = iota // the connection goroutine was created
	beganWake          // it woke from waiting for the next request
	beganRead          // it read the next request without waiting
	beganLate          // first seen at its background read or handler
	numBegan
)

const (
	endWrite = iota // its response write began (the last bytes went to the kernel)
	endAbort        // it waited for the background read after the response
	endNext         // the next request's read or background read began
	endIdle         // it blocked waiting for the next request
	endExit         // the connection goroutine exited
	numEnded
)

// serveState follows one net/http server connection goroutine.
type serveState struct {
	phase   servePhase
	blocked bool // phIdle: blocked waiting for the next request's bytes
	first   bool // blocked at the trace's start reading a connection's first request
	span    *reqState
	began   uint8
	bg      bool   // the span's background read was started
	handler bool   // a stack inside the handler was seen during the span
	wrote   bool   // a response write was seen during the span
	name    string // the handler: the innermost one a router dispatched to (stackInfo.handler)
	depth   int    // name's dispatch depth (stackInfo.handlerDepth)
}

// confirmed reports whether the open span is certainly a request: the
// connection did more than look for bytes that may not have come.
func (s *serveState) confirmed() bool {
	return s.bg || s.handler || s.wrote || s.began == beganWake || s.began == beganCreate
}

// progressed reports whether the open span is past reading its request, so
// that a read of the next request ends it.
func (s *serveState) progressed() bool { return s.bg || s.handler || s.wrote }

// inferState is the analyser's inference bookkeeping.
type inferState struct {
	kinds      []uint8 // by StackID: ik* bits, computed once
	began      [numBegan]int
	ended      [numEnded]int
	cutBefore  map[string]int // began before the trace, by handler ("" unknown)
	cutAfter   map[string]int // had not ended at the trace end, by handler
	sawPeek    bool           // a keep-alive wait under Peek was seen
	discarded  int            // spans that turned out to hold no request
	splitSpans int            // spans split by a second background read in them
	// gRPC (infer_grpc.go)
	rpcBegan, rpcEnded        int
	rpcCutBefore, rpcCutAfter map[string]int // by method ("" unknown)
}

const (
	ikComputed = 1 << iota
	ikAbort    // (*connReader).abortPendingRead: the response is written
	ikFinish   // a write to the connection under (*response).finishRequest: the response's last bytes
	ikPeek     // bufio.(*Reader).Peek under (*conn).serve: waiting for a keep-alive request
)

// inferKind returns the inference bits of a stack beyond the terms' flags.
func (a *Analyzer) inferKind(id tracein.StackID) uint8 {
	k := &a.inf
	for int(id) >= len(k.kinds) {
		k.kinds = append(k.kinds, 0)
	}
	if b := k.kinds[id]; b != 0 {
		return b
	}
	b := uint8(ikComputed)
	f := a.terms.stack(id).flags
	if f&flagReadRequest != 0 {
		prev := ""
		for _, f := range a.terms.stacks.Frames(id) {
			if f.Func == "net/http.(*conn).serve" && prev == "bufio.(*Reader).Peek" {
				b |= ikPeek
				a.inf.sawPeek = true
			}
			prev = f.Func
		}
	}
	if f&flagDone != 0 {
		write, finish := false, false
		for _, f := range a.terms.stacks.Frames(id) {
			switch f.Func {
			case "net/http.(*connReader).abortPendingRead":
				b |= ikAbort
			case "net/http.checkConnErrorWriter.Write":
				write = true // the connection's writer (under TLS too)
			case "net/http.(*response).finishRequest":
				finish = true
			}
		}
		// Only the response's write: finishRequest may also read what is
		// left of the request's body before it.
		if b&ikAbort == 0 && write && finish {
			b |= ikFinish
		}
	}
	k.kinds[id] = b
	return b
}

// inferCreated starts a span when a connection goroutine is created, and
// treats a background read started by one as a request mark.
func (a *Analyzer) inferCreated(g *gstate, ev *tracein.Event) {
	if !a.inferring {
		return
	}
	if a.rpcCreated(g, ev) {
		return
	}
	f := a.terms.stack(ev.Stack).flags
	if f&flagServe != 0 {
		g.serve = &serveState{phase: phIdle}
		a.beginSpan(g, ev.Time, beganCreate)
		return
	}
	if f&flagNoAdopt == 0 || ev.Actor == g.id {
		return
	}
	c := a.gs.Get(ev.Actor)
	if c == nil || c.serve == nil {
		return
	}
	s, t := c.serve, ev.Time
	switch s.phase {
	case phOpen:
		if s.bg { // a second request in one span: its boundary did not show
			a.inf.splitSpans++
			a.endSpan(c, t, endNext)
			a.beginSpan(c, t, beganLate)
		}
	case phCut:
		if !s.bg { // the cut request's own background read
			s.bg = true
			return
		}
		// The cut request had its background read: this is the next one's.
		s.phase = phIdle
		a.beginSpan(c, t, beganLate)
	case phUnknown:
		a.cutBefore(s, "", true)
		return
	default:
		a.beginSpan(c, t, beganLate)
	}
	s.bg = true
}

// inferInitial recognises connection goroutines that exist when the trace
// starts, and whether a request was in flight on them.
func (a *Analyzer) inferInitial(g *gstate, ev *tracein.Event) {
	if !a.inferring || g.serve != nil {
		return
	}
	a.rpcSeen(g, ev.Stack)
	si := a.terms.stack(ev.Stack)
	if si.flags&flagServe == 0 {
		return // not one, or no stack yet: its first stack tells
	}
	s := &serveState{phase: phUnknown}
	g.serve = s
	ik := a.inferKind(ev.Stack)
	switch {
	case si.flags&flagReadRequest != 0:
		s.phase = phIdle
		s.blocked = ev.To == tracein.Waiting
		// Recent net/http waits for a keep-alive connection's next request
		// under Peek (older versions only with an idle or read timeout); a
		// wait in readRequest itself is then a new connection's first
		// request, whose client connected before the trace.
		s.first = s.blocked && ik&ikPeek == 0
	case ik&ikAbort != 0:
		s.phase = phIdle
	case si.flags&flagHandler != 0:
		a.cutBefore(s, si.handler, true)
	case ik&ikFinish != 0:
		a.cutBefore(s, "", true)
		if ev.To == tracein.Syscall { // writing its response
			s.phase = phIdle
		}
	}
}

// cutBefore counts the request in flight on s when the trace started;
// progressed says it is past reading its header.
func (a *Analyzer) cutBefore(s *serveState, name string, progressed bool) {
	if a.inf.cutBefore == nil {
		a.inf.cutBefore = map[string]int{}
	}
	a.inf.cutBefore[name]++
	*s = serveState{phase: phCut, name: name, bg: progressed}
}

// peekEra reports whether the server waits for keep-alive requests under
// Peek, so that a wait or read in readRequest itself is a request being
// read: the trace showed such a wait, or it has a clock snapshot (Go 1.25+).
func (a *Analyzer) peekEra() bool { return a.inf.sawPeek || !a.info.StartWall.IsZero() }

// inferTransition moves a connection goroutine along its requests.
func (a *Analyzer) inferTransition(g *gstate, ev *tracein.Event) {
	if !a.inferring {
		return
	}
	if ev.Stack != tracein.NoStack || g.rpc != nil {
		if a.rpcSeen(g, ev.Stack); g.rpc != nil {
			if ev.To == tracein.NotExist {
				a.rpcEnded(g, ev.Time)
			}
			return
		}
	}
	si := a.terms.stack(ev.Stack)
	if g.serve == nil {
		if si.flags&flagServe == 0 {
			return
		}
		g.serve = &serveState{phase: phUnknown}
	}
	s, t := g.serve, ev.Time
	ik := uint8(0)
	if si.flags&(flagDone|flagReadRequest) != 0 {
		ik = a.inferKind(ev.Stack)
	}
	switch {
	case ev.To == tracein.NotExist:
		a.answered(g, t, endExit)
		s.phase = phIdle
	case ev.To == tracein.Waiting && si.flags&flagReadRequest != 0 && frame.KindOfReason(ev.Reason) == frame.Network:
		if s.phase == phOpen && !s.progressed() && s.began != beganRead || s.phase == phCut && !s.progressed() {
			break // the request's header is still arriving
		}
		unknown := s.phase == phUnknown
		a.answered(g, t, endIdle)
		s.phase, s.blocked = phIdle, true
		// First seen waiting in readRequest itself: a new connection's
		// first request (see inferInitial).
		s.first = unknown && ik&ikPeek == 0
	case ev.From == tracein.Waiting && s.phase == phIdle && s.blocked:
		first := s.first
		s.blocked, s.first = false, false
		if first && a.peekEra() {
			// The request began before the trace, on a connection
			// accepted before it.
			a.cutBefore(s, "", false)
			break
		}
		a.beginSpan(g, t, beganWake)
	case ev.To == tracein.Syscall && si.flags&flagReadRequest != 0:
		switch {
		case (s.phase == phOpen || s.phase == phCut) && !s.progressed():
			// still reading this request
		case s.phase == phUnknown && ik&ikPeek == 0 && a.peekEra():
			// Reading a request's header, first seen: it began before.
			a.cutBefore(s, "", false)
		case s.phase == phUnknown:
			s.phase = phIdle
			a.beginSpan(g, t, beganRead)
		default:
			a.answered(g, t, endNext)
			a.beginSpan(g, t, beganRead)
		}
	case ev.To == tracein.Waiting && ik&ikAbort != 0:
		a.answered(g, t, endAbort)
		s.phase = phIdle
	case ik&ikFinish != 0 && (ev.To == tracein.Syscall || ev.To == tracein.Waiting):
		// The response's last bytes go to the kernel: the client can
		// have them before the syscall returns (its return, and the
		// event, wait for the thread to run again).
		switch s.phase {
		case phUnknown:
			a.cutBefore(s, "", true)
		case phIdle:
			return // a write after the request was ended: nothing to split
		}
		s.wrote = true
		if ev.To == tracein.Syscall {
			a.answered(g, t, endWrite)
		}
	case si.flags&flagHandler != 0:
		switch s.phase {
		case phUnknown:
			a.cutBefore(s, si.handler, true)
		case phCut:
			s.handler = true
		case phIdle:
			a.beginSpan(g, t, beganLate)
		}
		if s.phase == phOpen {
			s.handler = true
			// The handler the router dispatched to: the innermost one any
			// stack of the request showed (a wait in a middleware before
			// it called the next handler shows only the middleware).
			if si.handler != "" && (s.name == "" || si.handlerDepth > s.depth) {
				s.name, s.depth = si.handler, si.handlerDepth
			}
		}
	}
}

// answered ends the request open or cut on g at t.
func (a *Analyzer) answered(g *gstate, t tracein.Time, how int) {
	s := g.serve
	switch s.phase {
	case phOpen:
		a.endSpan(g, t, how)
	case phCut:
		s.phase = phIdle
	}
}

func (a *Analyzer) beginSpan(g *gstate, t tracein.Time, how uint8) {
	s := g.serve
	if s.span != nil {
		a.endSpan(g, t, endNext)
	}
	r := &reqState{name: "", begin: t, inferred: true}
	*s = serveState{phase: phOpen, span: r, began: how}
	a.spans++
	a.join(g, r, t, -1, false)
}

func (a *Analyzer) endSpan(g *gstate, t tracein.Time, how int) {
	s := g.serve
	r := s.span
	if r == nil {
		return
	}
	// A connection that closes before any sign of a request (a client
	// closing an idle connection) held none.
	keep := s.confirmed() && (how != endExit || s.progressed())
	s.span, s.phase = nil, phIdle
	a.spans--
	r.name = inferredName(s.name)
	if !keep {
		a.inf.discarded++
		a.discard(r, t)
		return
	}
	a.inf.began[s.began]++
	a.inf.ended[how]++
	a.finish(r, t, g)
}

func inferredName(app string) string { return "http " + nameOr(frame.Short(app), "handler") }

// inferFinalize books the requests still open at the trace's end and the
// ones in flight at its start into the groups of their handlers: with the
// handler unknown, into the inferred group with the most requests.
func (a *Analyzer) inferFinalize() {
	if !a.inferring && a.opts.Infer != InferHTTP {
		return
	}
	for _, g := range a.gs.All() {
		s := g.serve
		if s == nil {
			continue
		}
		switch {
		case s.phase == phOpen && s.confirmed():
			if a.inf.cutAfter == nil {
				a.inf.cutAfter = map[string]int{}
			}
			a.inf.cutAfter[s.name]++
		}
	}
	for _, g := range a.gs.All() {
		if s := g.rpc; s != nil {
			a.inf.rpcCut(s.span == nil, s.name)
		}
	}
	// A request whose handler the trace never showed goes to the group of
	// its kind with the most requests.
	largest := func(prefix string) string {
		main := ""
		for _, gs := range a.groups {
			if gs.inferred && strings.HasPrefix(gs.name, prefix) && (main == "" || gs.Count > a.groups[main].Count || gs.Count == a.groups[main].Count && gs.name < main) {
				main = gs.name
			}
		}
		return main
	}
	book := func(cut map[string]int, named func(string) string, before bool) {
		main := ""
		for app, n := range cut {
			name := named(app)
			if app == "" {
				if main == "" {
					if main = largest(named("x")[:5]); main == "" {
						main = named("")
					}
				}
				name = main
			}
			if gs := a.group(name, true); before {
				gs.excludedBefore += n
			} else {
				gs.excludedAfter += n
			}
		}
	}
	book(a.inf.cutBefore, inferredName, true)
	book(a.inf.cutAfter, inferredName, false)
	book(a.inf.rpcCutBefore, rpcName, true)
	book(a.inf.rpcCutAfter, rpcName, false)
}

// inferredText is the finding that says how requests were inferred.
func (a *Analyzer) inferredText() string {
	k := &a.inf
	n := 0
	for _, c := range k.ended {
		n += c
	}
	before, after := 0, 0
	for _, c := range k.cutBefore {
		before += c
	}
	for _, c := range k.cutAfter {
		after += c
	}
	rb, ra := 0, 0
	for _, c := range k.rpcCutBefore {
		rb += c
	}
	for _, c := range k.rpcCutAfter {
		ra += c
	}
	var parts []string
	if n+before+after > 0 || k.rpcEnded+rb+ra == 0 {
		parts = append(parts, fmt.Sprintf("%d requests were inferred from net/http server connection goroutines "+
			"(HTTP/1.x), split at net/http's own request boundaries: began %s; ended %s; "+
			"%d began before the trace and %d had not ended at its end (excluded); "+
			"a latency runs from the server's first sight of the request to its response write, so the network, the client's own work "+
			"and, for a new connection, its dial and handshake are not in it",
			n, counted(k.began[:], beganNames[:]), counted(k.ended[:], endedNames[:]), before, after))
	}
	if k.rpcEnded+rb+ra > 0 {
		parts = append(parts, fmt.Sprintf("%d gRPC requests were inferred from grpc-go's handler goroutines (one per RPC, unary or streaming; "+
			"named by the method of the generated handler): %d began before the trace and %d had not ended at its end (excluded); "+
			"a latency runs from the handler goroutine's start (the RPC's headers read) to its exit (the response queued for the connection's writer), "+
			"so the transport before and after it is not in it",
			k.rpcEnded, rb, ra))
	}
	return "the trace has no runtime/trace tasks: " + strings.Join(parts, "; and ") +
		"; wrap handlers in trace.NewTask, or use latscope's agent middleware, for exact request boundaries"
}

var (
	beganNames = [numBegan]string{beganCreate: "with a new connection", beganWake: "on waking for the next request",
		beganRead: "on reading it without waiting", beganLate: "at its background read or handler"}
	endedNames = [numEnded]string{endWrite: "at the response write", endAbort: "at the wait after the response",
		endNext: "at the next request", endIdle: "on waiting for the next request", endExit: "at the connection's close"}
)

// counted lists the non-zero counts with their names: "on waking … 2303, …".
func counted(ns []int, names []string) string {
	var parts []string
	for i, n := range ns {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", names[i], n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// stopInferring drops inferred requests once the trace shows it has tasks.
func (a *Analyzer) stopInferring(t tracein.Time) {
	if !a.inferring || a.opts.Infer == InferHTTP {
		return
	}
	a.inferring = false
	for _, g := range a.gs.All() {
		if g.serve != nil && g.serve.span != nil {
			r := g.serve.span
			g.serve.span = nil
			a.discard(r, t)
		}
		if g.rpc != nil && g.rpc.span != nil {
			a.discard(g.rpc.span, t)
		}
		g.serve, g.rpc = nil, nil
	}
	a.spans = 0
	a.inf = inferState{}
}
