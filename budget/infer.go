package budget

import (
	"github.com/latscope/latscope/frame"
	"github.com/latscope/latscope/tracein"
)

// serveState follows a net/http server connection goroutine: a request
// span runs from the moment it stops waiting for the next request (or is
// created) until it blocks reading the next one again.
type serveState struct {
	idle        bool // blocked waiting for the next request
	done        bool // blocked after writing a response
	provisional bool // the span began when a response finished; the next request may not have arrived
	span        *reqState
	handler     bool   // a stack inside the handler was seen during the span
	name        string // outermost application frame seen inside the handler
}

// inferCreated starts a span when a connection goroutine is created.
func (a *Analyzer) inferCreated(g *gstate, ev *tracein.Event) {
	if !a.inferring || a.terms.stack(ev.Stack).flags&flagServe == 0 {
		return
	}
	g.serve = &serveState{}
	a.beginSpan(g, ev.Time)
}

// inferInitial recognises connection goroutines that exist when the trace starts.
func (a *Analyzer) inferInitial(g *gstate, ev *tracein.Event) {
	if !a.inferring || g.serve != nil {
		return
	}
	if f := a.terms.stack(ev.Stack).flags; f&flagServe != 0 {
		g.serve = &serveState{idle: f&flagReadRequest != 0 && ev.To == tracein.Waiting}
	}
}

// inferTransition moves a connection goroutine's span along.
func (a *Analyzer) inferTransition(g *gstate, ev *tracein.Event) {
	if !a.inferring {
		return
	}
	si := a.terms.stack(ev.Stack)
	if g.serve == nil {
		if si.flags&flagServe == 0 {
			return
		}
		g.serve = &serveState{}
	}
	s := g.serve
	if s.span != nil && si.flags&flagHandler != 0 {
		s.handler = true
		if s.name == "" && si.outerApp != "" {
			s.name = si.outerApp
		}
	}
	switch {
	case ev.To == tracein.Waiting && si.flags&flagReadRequest != 0:
		a.endSpan(g, ev.Time, s.handler)
		s.idle = true
	case ev.To == tracein.Waiting && si.flags&flagDone != 0:
		a.endSpan(g, ev.Time, true)
		s.done = true
	case ev.To == tracein.NotExist:
		a.endSpan(g, ev.Time, s.handler)
	case ev.From == tracein.Waiting && s.idle:
		s.idle = false
		a.beginSpan(g, ev.Time)
	case ev.From == tracein.Waiting && s.done:
		// The next request may already be waiting in the buffer, in which
		// case the goroutine never blocks between the two: start now.
		s.done = false
		a.beginSpan(g, ev.Time)
		s.provisional = true
	}
}

func (a *Analyzer) beginSpan(g *gstate, t tracein.Time) {
	r := &reqState{name: "", begin: t, inferred: true}
	g.serve.span, g.serve.handler, g.serve.name, g.serve.provisional = r, false, "", false
	a.spans++
	a.join(g, r, t, -1, false)
}

func (a *Analyzer) endSpan(g *gstate, t tracein.Time, keep bool) {
	s := g.serve
	r := s.span
	if r == nil {
		return
	}
	s.span = nil
	a.spans--
	r.name = "http " + nameOr(frame.Short(s.name), "handler")
	if !keep {
		a.discard(r, t)
		return
	}
	a.finish(r, t, g)
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
		g.serve = nil
	}
	a.spans = 0
}
