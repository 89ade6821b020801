package budget

import (
	"unsafe"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// histLen is how many closed intervals each goroutine remembers, so that a
// goroutine outside any request (net/http's readLoop, a worker) can explain
// the wait of the request goroutine it wakes.
const histLen = 16

// hseg is a remembered interval of any goroutine.
type hseg struct {
	start, end tracein.Time
	kind       frame.Kind
	waker      tracein.GoID
	stack      tracein.StackID // the blocking stack of a wait or syscall
}

// gstate is the analyser's scratch state for one live goroutine: its
// variables, reset when the state is reused for another goroutine, and its
// ring of closed intervals, which is not (history reads only the rn pushed
// since, and clearing its 640 bytes at each goroutine's creation cost more
// than the rest of the creation).
type gstate struct {
	gvars
	ring [histLen]hseg
}

// gvars are a gstate's variables.
type gvars struct {
	id    tracein.GoID
	state tracein.State
	since tracein.Time
	kind  frame.Kind      // of the current interval
	term  critpath.TermID // of the current wait or syscall
	stack tracein.StackID // blocking stack of the current wait or syscall
	rn    int             // intervals pushed into ring so far
	// resume is the stack where the goroutine's current or next running
	// time begins (the wait, syscall or preemption it comes out of, its start
	// function, or the task or region event that cut it); cpu are the CPU
	// samples taken in its current running interval (cpu.go).
	resume tracein.StackID
	cpu    []cpuSample

	// Request membership: the request this goroutine's time belongs to now.
	req    *reqState
	m      *member      // req.members[mi]
	mi     int32        // index in req.members
	joined tracein.Time // when it joined req
	// lastEnd is when it last left a request (runnableBefore's bound);
	// creator is the goroutine that created it in the trace, else
	// NoGoroutine.
	lastEnd tracein.Time
	creator tracein.GoID
	saved   []membership // memberships suspended by a region of another request
	// regions is the stack of open regions (innermost last).
	regions []region

	serve *serveState // for net/http server goroutines, when inferring
	rpc   *rpcState   // for grpc-go handler goroutines, when inferring
	// grpc-go's transport around a handler goroutine (rpcg set), in every
	// mode: the connection's reader that started it, and when that reader
	// last began a read; for a connection's reader, readAt; for its writer
	// (loopyWriter), wroteAt, the start of its last write.
	rpcg    bool
	inReq   bool // was ever a member of a request
	conn    tracein.GoID
	readAt  tracein.Time
	wroteAt tracein.Time
	wokeAt  tracein.Time // a handler goroutine: when it last woke its connection's writer
	writer  tracein.GoID // a handler goroutine: its connection's writer, once it woke it
}

type membership struct {
	req    *reqState
	mi     int32
	joined tracein.Time
}

type region struct {
	id     int32     // index in Analyzer.regionNames
	joined *reqState // the request this region made the goroutine join, if any
}

// push remembers the closed interval [start, end) of g's current kind,
// written in place.
func (g *gstate) push(start, end tracein.Time, waker tracein.GoID) {
	h := &g.ring[uint(g.rn)%histLen]
	h.start, h.end, h.kind, h.waker, h.stack = start, end, g.kind, waker, g.stack
	g.rn++
}

// history returns the remembered intervals that end after lb, oldest first.
func (g *gstate) history(lb tracein.Time, out []hseg) []hseg {
	n := min(g.rn, histLen)
	for i := g.rn - n; i < g.rn; i++ {
		if h := g.ring[uint(i)%histLen]; h.end > lb {
			out = append(out, h)
		}
	}
	return out
}

// regionID returns the innermost open region's id (0 is "no region").
func (g *gstate) regionID() int32 {
	if len(g.regions) == 0 {
		return 0
	}
	return g.regions[len(g.regions)-1].id
}

// kindOf maps a goroutine state (and wait reason) to a kind; reasons
// remembers the kinds of wait reasons.
func kindOf(s tracein.State, reason string, reasons *reasonKinds) frame.Kind {
	switch s {
	case tracein.Running:
		return frame.Running
	case tracein.Runnable:
		return frame.Runnable
	case tracein.Syscall:
		return frame.Syscall
	case tracein.Waiting:
		return reasons.kind(reason)
	}
	return frame.Other
}

// reasonKinds remembers frame.KindOfReason's answers by the string itself:
// a trace's reason strings are the parser's string table's, so the same
// reason comes back as the same bytes at the same address, and comparing
// the address and length costs less than hashing the string for the map
// lookup of KindOfReason (one per wait). Each slot holds its string, so
// the bytes it points to stay alive and cannot become another string's.
type reasonKinds [8]struct {
	s    string
	kind frame.Kind
	ok   bool
}

func (c *reasonKinds) kind(reason string) frame.Kind {
	p := unsafe.StringData(reason)
	e := &c[uintptr(unsafe.Pointer(p))>>3%uintptr(len(c))]
	if e.ok && unsafe.StringData(e.s) == p && len(e.s) == len(reason) {
		return e.kind
	}
	k := frame.KindOfReason(reason)
	e.s, e.kind, e.ok = reason, k, true
	return k
}
