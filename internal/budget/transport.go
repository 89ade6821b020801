package budget

import (
	"fmt"

	"github.com/latscope/latscope/internal/tracein"
)

// The transport outside a gRPC request. A request, inferred or a task made
// by an interceptor, runs inside grpc-go's handler goroutine; the
// connection's reader read the RPC before it, and the connection's writer
// (loopyWriter) writes the response after it. The trace shows both, so
// latscope estimates that time, per request, on the server's side
// (docs/method.md §2, "Time outside the request"):
//
//   - before: from the start of the reader's last read before it started the
//     handler goroutine (the read that brought the RPC's headers) to the
//     request's begin;
//   - after: from the request's end to the start of the writer's next write
//     (the response's bytes going to the kernel), 0 when the writer had
//     already written since the handler last woke it (an inferred request,
//     which ends at the goroutine's exit after it queued the response).
//
// What neither goroutine shows (the network, the client) stays outside.

// transportPending is a request whose after-time waits for its
// connection writer's next write.
type transportPending struct {
	gs  *groupState
	end tracein.Time
}

// TransportEstimate is the estimated transport outside a group's requests
// (grpc-go): mean ns before and after, over the requests it was seen for.
type TransportEstimate struct {
	Before, After   float64 // mean ns per request
	BeforeN, AfterN int     // requests each mean is over
}

// rpcTransports reports whether rpcTransport does anything for ev: the
// transitions its switch handles (inlined, so that the others cost no call).
func rpcTransports(ev *tracein.Event) bool {
	return ev.From == tracein.NotExist || ev.To == tracein.Syscall || ev.From == tracein.Waiting && ev.To == tracein.Runnable
}

// rpcTransport follows grpc-go's transport goroutines; called for every
// state transition (that rpcTransports lets through) before the
// goroutine's new state is set.
func (a *Analyzer) rpcTransport(g *gstate, ev *tracein.Event) {
	t := ev.Time
	switch {
	case ev.From == tracein.NotExist:
		if a.terms.stack(ev.Stack).flags&flagRPC != 0 {
			g.rpcg, g.conn = true, ev.Actor
			if c := a.gs.Get(ev.Actor); c != nil {
				g.readAt = c.readAt
			}
		}
	case ev.To == tracein.Syscall:
		f := a.terms.stack(ev.Stack).flags
		switch {
		case f&flagRPCRead != 0:
			g.readAt = t
		case f&flagRPCWrite != 0:
			g.wroteAt = t
			if g.conn != tracein.NoGoroutine {
				a.wrote(g.conn, t)
			}
		}
	case ev.From == tracein.Waiting && ev.To == tracein.Runnable:
		// A handler goroutine waking its connection's writer: the writer
		// is now known for the connection.
		x := a.gs.Get(ev.Actor)
		if x == nil || !x.rpcg || g.state != tracein.Waiting || g.stack == tracein.NoStack || a.terms.stack(g.stack).flags&flagRPCWrite == 0 {
			return
		}
		x.wokeAt = t
		x.writer = g.id
		g.conn = x.conn
	}
}

// wrote resolves the requests of connection conn waiting for a write at t.
func (a *Analyzer) wrote(conn tracein.GoID, t tracein.Time) {
	ps := a.rpcPending[conn]
	keep := ps[:0]
	for _, p := range ps {
		if p.end > t {
			keep = append(keep, p)
			continue
		}
		p.gs.rpcAfter += int64(t - p.end)
		p.gs.rpcAfterN++
	}
	if len(keep) == 0 {
		delete(a.rpcPending, conn)
		return
	}
	a.rpcPending[conn] = keep
}

// rpcFinished books the transport before request r (just ended at t on
// ender) and registers it for the time after.
func (a *Analyzer) rpcFinished(gs *groupState, r *reqState, ender *gstate, t tracein.Time) {
	if ender == nil || !ender.rpcg {
		return
	}
	if ender.readAt > 0 && ender.readAt <= r.begin {
		gs.rpcBefore += int64(r.begin - ender.readAt)
		gs.rpcBeforeN++
	}
	if r.inferred && ender.writer != tracein.NoGoroutine && ender.wokeAt > 0 {
		if w := a.gs.Get(ender.writer); w != nil && w.wroteAt >= ender.wokeAt {
			gs.rpcAfterN++ // already in the kernel when the goroutine exited
			return
		}
	}
	if a.rpcPending == nil {
		a.rpcPending = map[tracein.GoID][]transportPending{}
	}
	a.rpcPending[ender.conn] = append(a.rpcPending[ender.conn], transportPending{gs: gs, end: t})
}

// transport returns a group's estimate, nil when no request had one.
func (gs *groupState) transport() *TransportEstimate {
	if gs.rpcBeforeN == 0 && gs.rpcAfterN == 0 {
		return nil
	}
	e := &TransportEstimate{BeforeN: gs.rpcBeforeN, AfterN: gs.rpcAfterN}
	if gs.rpcBeforeN > 0 {
		e.Before = float64(gs.rpcBefore) / float64(gs.rpcBeforeN)
	}
	if gs.rpcAfterN > 0 {
		e.After = float64(gs.rpcAfter) / float64(gs.rpcAfterN)
	}
	return e
}

func transportText(g *Group) string {
	e := g.Transport
	return fmt.Sprintf("%s: time outside the request, estimated from grpc-go's transport goroutines: %.3f ms before it "+
		"(the connection's read of the RPC → the request's start; %d of %d requests) and %.3f ms after it "+
		"(the request's end → the connection writer's write of the response; %d requests); "+
		"the client waits at least this much more, plus the network",
		g.Name, e.Before/1e6, e.BeforeN, g.Count, e.After/1e6, e.AfterN)
}
