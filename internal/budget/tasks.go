package budget

import (
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

func (a *Analyzer) taskBegin(ev *tracein.Event) {
	a.info.Tasks++
	if a.opts.Infer == InferHTTP {
		return
	}
	if !a.seenTask {
		a.seenTask = true
		a.stopInferring(ev.Time)
	}
	if p := a.request(ev.Parent); p != nil && ev.Parent != tracein.BackgroundTask {
		a.info.NestedTasks++ // a sub-task is part of its parent request
		a.nested[ev.Task] = p
		a.begun[ev.Task] = struct{}{}
		return
	}
	if a.orphan(ev.Parent) {
		// Its parent began before the trace (or is such a task): a piece of
		// a request cut by the window — OpenTelemetry's SDK begins a task
		// per span, its child spans' inside its root's — not a request.
		a.info.OrphanTasks++
		a.orphans[ev.Task] = struct{}{}
		return
	}
	a.begun[ev.Task] = struct{}{}
	g := a.g(ev.G)
	r := &reqState{task: ev.Task, name: ev.Name, begin: ev.Time}
	if g.req == nil {
		// A task begun inside another request (an outbound call's, a
		// batch's) did not arrive: the time before it is that request's.
		r.before, r.measured = a.runnableBefore(g), true
	}
	a.open[ev.Task] = r
	a.join(g, r, ev.Time, -1, false)
}

func (a *Analyzer) taskEnd(ev *tracein.Event) {
	if a.opts.Infer == InferHTTP {
		return
	}
	if _, ok := a.nested[ev.Task]; ok {
		delete(a.nested, ev.Task) // its time is its parent's
		return
	}
	if _, ok := a.orphans[ev.Task]; ok {
		return // counted in OrphanTasks (kept: its later sub-tasks are pieces too)
	}
	r, ok := a.open[ev.Task]
	if !ok {
		route, routed := a.cutRoute[ev.Task]
		delete(a.cutRoute, ev.Task)
		_, seen := a.begun[ev.Task]
		switch {
		case seen:
			// A sub-task whose request ended first; counted with it.
		case a.opts.TraceID != "":
			// Began before the trace: its trace ID is not in it.
		case routed:
			a.group(route, false).excludedBefore++
		case ev.Name != "":
			a.group(ev.Name, false).excludedBefore++
		default:
			// Begun before the trace: the trace does not say its type.
			a.info.ExcludedUntyped++
		}
		return
	}
	delete(a.open, ev.Task)
	a.finish(r, ev.Time, a.gs.Get(ev.G))
}

func (a *Analyzer) regionBegin(ev *tracein.Event) {
	g := a.g(ev.G)
	a.split(g, ev.Time)
	rg := region{id: a.regionID(ev.Name)}
	if r := a.request(ev.Task); r != nil && g.req != r {
		a.join(g, r, ev.Time, -1, false)
		rg.joined = r
	}
	g.regions = append(g.regions, rg)
}

func (a *Analyzer) regionEnd(ev *tracein.Event) {
	g := a.g(ev.G)
	a.split(g, ev.Time)
	if len(g.regions) == 0 {
		return // the region began before the trace
	}
	rg := g.regions[len(g.regions)-1]
	g.regions = g.regions[:len(g.regions)-1]
	if rg.joined != nil && g.req == rg.joined {
		a.leave(g, ev.Time, false)
	}
}

// log: a goroutine that logs in a task's context belongs to it from then on.
func (a *Analyzer) log(ev *tracein.Event) {
	if ev.Name == tracelog.CPU && ev.Task == tracein.BackgroundTask {
		a.info.CPULog.add(ev.Time, ev.Message)
		return
	}
	r := a.request(ev.Task)
	if r == nil {
		if ev.Name == tracelog.Route && ev.Task != tracein.BackgroundTask && !a.known(ev.Task) {
			a.cutRoute[ev.Task] = ev.Message // a request begun before the trace: its route, for its end
		}
		return
	}
	if r.task == ev.Task { // the request's own task, not a sub-task
		switch ev.Name {
		case tracelog.Call:
			r.call = true // an outbound call's task outside any request: excluded at its end
		case tracelog.Request:
			a.requestLog(r, ev.Message)
		case tracelog.Route:
			if ev.Message != "" && ev.Message != r.name {
				a.renamedFrom[r.name] = true
				r.name = ev.Message
			}
		}
	}
	if g := a.g(ev.G); g.req != r {
		a.join(g, r, ev.Time, -1, false)
	}
}

// orphan reports whether a task whose parent is parent is a piece of a
// request the trace cut: its parent is neither the background task nor a
// task the trace saw begin, or is itself such a piece.
func (a *Analyzer) orphan(parent tracein.TaskID) bool {
	if parent == tracein.BackgroundTask || parent == tracein.NoTask {
		return false
	}
	if _, ok := a.orphans[parent]; ok {
		return true
	}
	_, ok := a.begun[parent]
	return !ok
}

// known reports whether the trace saw task begin (as a request, a sub-task
// or a piece of a cut request).
func (a *Analyzer) known(task tracein.TaskID) bool {
	if _, ok := a.begun[task]; ok {
		return true
	}
	_, ok := a.orphans[task]
	return ok
}

// request returns the open request that task is or is part of (a sub-task
// begun inside it), or nil.
func (a *Analyzer) request(task tracein.TaskID) *reqState {
	if r := a.open[task]; r != nil {
		return r
	}
	if r := a.nested[task]; r != nil && a.open[r.task] == r { // its parent may have ended first
		return r
	}
	return nil
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
