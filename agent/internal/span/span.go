// Package span holds the request span the agent keeps in a request's
// context, and makes the spans of the calls and queries under it: the part
// of the agent that its driver packages (agentpgx) share with it.
package span

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/tracelog"
)

// Key is the context key of a request's *Info.
type Key struct{}

// Info is what the agent's Handler puts into a request's context.
type Info struct {
	TP tracelog.TraceParent // the request's own span
	// Other returns the current span of ctx in another tracing system;
	// nil unless the agent's Options.SpanContext is set.
	Other func(ctx context.Context) (tracelog.TraceParent, bool)
	// Route records each DB call of the request's route; nil when the
	// agent's metrics are off, and then the calls are not timed at all.
	Route DBCallObserver

	// Totals of the calls made under the request, added to by the calls'
	// goroutines (AddDB, AddOutbound) while metrics are on.
	dbNanos, outNanos atomic.Int64
	dbCalls, outCalls atomic.Int64
}

// DBCallObserver records one DB call (agent.RouteMetrics has this
// method).
type DBCallObserver interface{ DBCall(time.Duration) }

// Metered tells whether the calls under ri are timed (the agent's metrics
// are on). ri may be nil: outside a request nothing is timed.
func (ri *Info) Metered() bool { return ri != nil && ri.Route != nil }

// AddDB adds one DB call of duration d to the request and records it in
// Route. Safe for concurrent use; ri must be Metered.
func (ri *Info) AddDB(d time.Duration) {
	ri.dbNanos.Add(int64(d))
	ri.dbCalls.Add(1)
	ri.Route.DBCall(d)
}

// AddOutbound adds one outbound call of duration d to the request. Safe
// for concurrent use.
func (ri *Info) AddOutbound(d time.Duration) {
	ri.outNanos.Add(int64(d))
	ri.outCalls.Add(1)
}

// Calls returns the number and summed duration of the DB calls and of the
// outbound calls added so far.
func (ri *Info) Calls() (dbCalls int64, db time.Duration, outCalls int64, out time.Duration) {
	return ri.dbCalls.Load(), time.Duration(ri.dbNanos.Load()), ri.outCalls.Load(), time.Duration(ri.outNanos.Load())
}

// Of returns the request Info of ctx, or nil outside a request.
func Of(ctx context.Context) *Info {
	ri, _ := ctx.Value(Key{}).(*Info)
	return ri
}

// Call returns the traceparent for one outbound call or query made under
// ctx: the other tracing system's current span when it finds one (it owns
// span identity then), else a new span ID in the request's trace, else a
// new unsampled trace.
func Call(ctx context.Context) tracelog.TraceParent {
	ri := Of(ctx)
	if ri == nil {
		return NewTrace()
	}
	if ri.Other != nil {
		if tp, ok := ri.Other(ctx); ok && tp.IsValid() {
			return tp
		}
	}
	return ChildOf(ri.TP)
}

// Request returns the span of a request whose incoming traceparent header
// is header: a child of it when it is valid, else a new trace.
func Request(header string) tracelog.TraceParent {
	if header != "" {
		if parent, err := tracelog.ParseTraceParent(header); err == nil {
			return ChildOf(parent)
		}
	}
	return NewTrace()
}

// ChildOf returns a new span in parent's trace, with parent's flags.
func ChildOf(parent tracelog.TraceParent) tracelog.TraceParent {
	if !parent.IsValid() {
		return NewTrace()
	}
	tp := parent
	tp.SpanID = newSpanID()
	return tp
}

// NewTrace returns a new trace with the sampled flag clear: latscope's own
// traces must not make downstream tracers record every request.
func NewTrace() tracelog.TraceParent {
	var tp tracelog.TraceParent
	for tp.TraceID == [16]byte{} {
		binary.LittleEndian.PutUint64(tp.TraceID[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(tp.TraceID[8:], rand.Uint64())
	}
	tp.SpanID = newSpanID()
	return tp
}

// newSpanID returns a random non-zero span ID.
func newSpanID() [8]byte {
	var id [8]byte
	for id == [8]byte{} {
		binary.LittleEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
