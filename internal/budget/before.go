package budget

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// RunnableBefore is the time a group's requests waited for a CPU before
// they began: the goroutine that began each request's trace task was
// runnable for this long since its last wait — the request had arrived
// (net/http's connection goroutine woken by the network) and the server
// had no processor to read it. It is outside the requests' latency and
// inside the cycle their clients see; at CPU saturation it grows with the
// CPU's queue (docs/method.md §7, "Before the request").
type RunnableBefore struct {
	Requests int     // requests measured: those a trace task began
	Mean     float64 // ns per request measured
}

// beforeHops bounds the hand-offs runnableBefore follows back.
const beforeHops = 2

// runnableBefore returns the runnable time in what led g to begin a
// request: g's runnable intervals back to its latest wait, and, when
// another goroutine ended that wait by a hand-off (net/http's connection
// reader wakes its connection's goroutine through a sync.Cond), that
// goroutine's runnable intervals before it did, at most beforeHops
// hand-offs back — and, back at g's creation in the trace, its creator's
// (net/http's accept loop for a new connection); never before the end of
// g's previous request, nor inside a request of the waker's. Called
// as g begins a request, so its current interval is running.
func (a *Analyzer) runnableBefore(g *gstate) int64 {
	lb := g.lastEnd
	ub := tracein.Time(math.MaxInt64)
	var sum int64
	for hop := 0; g != nil; hop++ {
		next := tracein.NoGoroutine
		born := g.rn <= histLen // the ring holds g's whole life in the trace
	walk:
		for i := g.rn - 1; i >= max(0, g.rn-histLen); i-- {
			h := g.ring[i%histLen]
			switch {
			case h.end > ub: // the waker's time after it woke the one before
			case h.end <= lb:
				born = false
				break walk
			case h.kind == frame.Runnable:
				sum += int64(h.end - max(h.start, lb))
			case h.kind == frame.Running || h.kind == frame.Syscall:
			case h.kind.IsHandOff() && h.waker != tracein.NoGoroutine && h.waker != g.id && hop < beforeHops:
				next, ub = h.waker, h.end
				born = false
				break walk
			default:
				born = false
				break walk
			}
			if i == 0 && born && g.creator != tracein.NoGoroutine && g.creator != g.id && hop < beforeHops {
				// back to g's creation: the goroutine that created it for
				// the request (net/http's accept loop, woken by the
				// network for a new connection) waited before it did
				next, ub = g.creator, h.start
			}
		}
		if next == tracein.NoGoroutine {
			break
		}
		g = a.gs.Get(next)
		if g == nil || g.req != nil && g.joined <= ub {
			break // the waker was inside a request of its own as it handed over
		}
		// The waker's time in a request of its own that ended (a limiter's
		// slot released as it ends) is that request's, not a wait before
		// this one.
		lb = max(lb, g.lastEnd)
	}
	return sum
}

// runnableBefore is the group's RunnableBefore; nil when no request was
// measured or none waited.
func (gs *groupState) runnableBefore() *RunnableBefore {
	if gs.beforeN == 0 || gs.before == 0 {
		return nil
	}
	return &RunnableBefore{Requests: gs.beforeN, Mean: float64(gs.before) / float64(gs.beforeN)}
}

// beforeShare is the least share of the mean latency that RunnableBefore
// must reach for its finding.
const beforeShare = 0.05

// beforeText says how long the group's requests waited for a CPU before
// they began.
func beforeText(g *Group) string {
	b := g.RunnableBefore
	return fmt.Sprintf("%s: before each request began, its goroutine waited %.3f ms on average for a CPU (runnable since the request arrived; %d requests, %.0f%% of the mean latency): outside the latency above, inside what the clients see",
		g.Name, b.Mean/1e6, b.Requests, 100*b.Mean/g.Latency.Mean)
}
