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
		return
	}
	r := &reqState{task: ev.Task, name: ev.Name, begin: ev.Time}
	a.open[ev.Task] = r
	a.join(a.g(ev.G), r, ev.Time, -1, false)
}

func (a *Analyzer) taskEnd(ev *tracein.Event) {
	if a.opts.Infer == InferHTTP {
		return
	}
	if _, ok := a.nested[ev.Task]; ok {
		delete(a.nested, ev.Task) // its time is its parent's
		return
	}
	r, ok := a.open[ev.Task]
	if !ok {
		if ev.Name != "" {
			a.group(ev.Name, false).excludedBefore++
		} else {
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
		return
	}
	if g := a.g(ev.G); g.req != r {
		a.join(g, r, ev.Time, -1, false)
	}
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
