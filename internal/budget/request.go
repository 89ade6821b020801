package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/tracein"
)

// reqState is an open request's scratch state. It is dropped when the
// request ends.
type reqState struct {
	task     tracein.TaskID
	name     string
	begin    tracein.Time
	inferred bool
	// call: a tracelog.Call log in its own task says it is an outbound
	// call's task outside any request, excluded at its end.
	call bool
	// traceID is the trace ID of the first latscope.request log in the
	// request's own task (traced: there was one).
	traceID TraceID
	traced  bool
	// before is the runnable time of the goroutine that began the request
	// since its last wait, before the task began (measured: a task began it).
	before    int64
	measured  bool
	members   []*member
	borrows   []critpath.Borrowed
	samples   int
	regionCPU map[int32]int
	stackCPU  map[tracein.StackID]int
	// closed: the request ended at end (in its goroutine endG) and waits
	// in Analyzer.pending to be booked (settle), its members' timelines
	// copied into gs (their segments in segs, the innermost region of each
	// in regs), its running segments to split by frame in runs.
	closed bool
	end    tracein.Time
	endG   int32
	gs     []critpath.G
	segs   []critpath.Seg
	regs   []int32
	runs   []runRef
}

// member is one goroutine's time inside a request.
type member struct {
	g         critpath.G
	regions   []int32  // innermost region (id) of each segment, parallel to g.Segs
	alive     bool     // still a member (not ended, not left)
	tentative bool     // created in the request; its time counts only if it ends inside it
	runs      []runRef // the running segments, to be split by frame when the request is booked (cpu.go)
}

// join makes g a member of r from time t.
func (a *Analyzer) join(g *gstate, r *reqState, t tracein.Time, creator int32, tentative bool) {
	if g.req != nil {
		a.split(g, t)
		g.saved = append(g.saved, membership{g.req, g.mi, g.joined})
	}
	m := a.free.member()
	m.alive, m.tentative = true, tentative
	m.g = critpath.G{ID: g.id, Creator: creator, Start: t, Committed: !tentative, Segs: m.g.Segs[:0]}
	m.regions = m.regions[:0]
	m.runs = m.runs[:0]
	r.members = append(r.members, m)
	g.req, g.m, g.mi, g.joined = r, m, int32(len(r.members)-1), t
	g.inReq = true
}

// leave ends g's membership of its current request at t, restoring a
// suspended one. ended says the goroutine exited.
func (a *Analyzer) leave(g *gstate, t tracein.Time, ended bool) {
	if g.req == nil {
		return
	}
	a.split(g, t)
	g.lastEnd = t
	m := g.m
	m.alive = false
	if ended && m.tentative {
		m.tentative = false
		m.g.Committed = true
	}
	g.req, g.m = nil, nil
	for len(g.saved) > 0 {
		s := g.saved[len(g.saved)-1]
		g.saved = g.saved[:len(g.saved)-1]
		if s.req.open() {
			g.req, g.m, g.mi, g.joined = s.req, s.req.members[s.mi], s.mi, t
			break
		}
	}
}

func (r *reqState) open() bool { return r.members != nil && !r.closed }

// freeLists keep the members (and their slices' capacity) of finished
// requests for the next ones, so a long trace does not allocate per request.
type freeLists struct{ members []*member }

const maxFree = 4096

func (f *freeLists) member() *member {
	if n := len(f.members); n > 0 {
		m := f.members[n-1]
		f.members = f.members[:n-1]
		return m
	}
	return &member{}
}

// release returns a finished request's members.
func (f *freeLists) release(r *reqState) {
	for _, m := range r.members {
		if len(f.members) >= maxFree {
			break
		}
		if cap(m.g.Segs) > 1<<14 { // do not keep a pathological request's memory
			continue
		}
		f.members = append(f.members, m)
	}
}

// memberOf returns g's member index in r, or -1.
func memberOf(g *gstate, r *reqState) int32 {
	if g != nil && g.req == r {
		return g.mi
	}
	return -1
}
