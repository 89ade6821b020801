package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// groupState accumulates the requests of one request type.
type groupState struct {
	name           string
	inferred       bool
	count          int
	excludedBefore int // ended in the trace, began before it
	excludedAfter  int // began in the trace, still open at its end
	lat            []int64
	begins         []tracein.Time
	terms          []*termAcc // by TermID; nil where the term never occurred
	running        int64
	runnable       int64
	critRunning    int64
	critRunnable   int64
	critUnknown    int64
	// cpuFrom is running time with a CPU term, by how its frame was found
	// (critpath.CPUFrom); critCPU the part of critRunning with one.
	cpuFrom      [3]int64
	critCPU      int64
	forked       int
	overfull     int
	pathMismatch int
	samples      int
	regions      []regionAcc                 // by region id
	stacks       []*[frame.NumKinds]stackAcc // by StackID
	cpuStacks    map[tracein.StackID]int
	pred         [][]int64
	slowest      *Path
	reservoir    []*Path
	seen         int
	rng          uint64
	// grpc-go's transport outside the requests (transport.go): ns summed
	// and the requests each sum is over.
	rpcBefore, rpcAfter   int64
	rpcBeforeN, rpcAfterN int
	// slowTraces: the slowest requests with a trace ID (keepSlow); traced
	// counts the requests with one.
	slowTraces []TracedRequest
	traced     int
}

type termAcc struct {
	wait, crit, fix, contention int64
	along                       int64 // critical running time along with a CPU term (TermStat.Along)
	requests, critRequests      int
	causes                      [frame.NumKinds]int64
	roots                       map[rootKey]*rootAcc // by the cause's stack and kind
}

type rootKey struct {
	stack tracein.StackID
	kind  frame.Kind
}

type rootAcc struct {
	crit int64
	hops uint8 // the most goroutines between the request and the cause
}

type stackAcc struct{ wait, crit int64 }

func (gs *groupState) stack(st tracein.StackID, k frame.Kind) *stackAcc {
	for int(st) >= len(gs.stacks) {
		gs.stacks = append(gs.stacks, nil)
	}
	if gs.stacks[st] == nil {
		gs.stacks[st] = new([frame.NumKinds]stackAcc)
	}
	return &gs.stacks[st][k]
}

type regionAcc struct {
	wall int64
	cpu  int
}

// group returns the accumulator of a request type, creating it.
func (a *Analyzer) group(name string, inferred bool) *groupState {
	gs := a.groups[name]
	if gs == nil {
		gs = &groupState{name: name, inferred: inferred, cpuStacks: map[tracein.StackID]int{}, rng: 0x9E3779B97F4A7C15}
		gs.pred = make([][]int64, len(a.opts.Predictions))
		a.groups[name] = gs
	}
	return gs
}

func (gs *groupState) term(t critpath.TermID) *termAcc {
	for int(t) >= len(gs.terms) {
		gs.terms = append(gs.terms, nil)
	}
	if gs.terms[t] == nil {
		gs.terms[t] = &termAcc{}
	}
	return gs.terms[t]
}

func (gs *groupState) region(id int32) *regionAcc {
	for int(id) >= len(gs.regions) {
		gs.regions = append(gs.regions, regionAcc{})
	}
	return &gs.regions[id]
}

// keepPath keeps the slowest request's path and a reservoir sample of the
// others (deterministic, so output is reproducible).
func (gs *groupState) keepPath(r *reqState, req *critpath.Request, path []critpath.PathSeg, capacity int) {
	lat := req.Latency()
	// mk makes the kept path, in old's place when given: a reservoir
	// entry replaced is referred to by nothing else, and its segments'
	// array is reused.
	mk := func(old *Path) *Path {
		p := old
		if p == nil || cap(p.Segs) < len(path) {
			p = &Path{Segs: make([]critpath.PathSeg, len(path))}
		}
		*p = Path{Task: r.task, TraceID: r.traceID, Begin: req.Begin, End: req.End, Latency: lat, Goroutines: countCommitted(req), Segs: p.Segs[:len(path)]}
		for i, s := range path { // chronological
			p.Segs[len(path)-1-i] = s
		}
		return p
	}
	if gs.slowest == nil || lat > gs.slowest.Latency {
		gs.slowest = mk(gs.slowest)
	}
	gs.seen++
	if len(gs.reservoir) < capacity {
		gs.reservoir = append(gs.reservoir, mk(nil))
		return
	}
	gs.rng ^= gs.rng << 13
	gs.rng ^= gs.rng >> 7
	gs.rng ^= gs.rng << 17
	if j := int(gs.rng % uint64(gs.seen)); j < capacity {
		gs.reservoir[j] = mk(gs.reservoir[j])
	}
}

func countCommitted(req *critpath.Request) int {
	n := 0
	for i := range req.Gs {
		if req.Gs[i].Committed {
			n++
		}
	}
	return n
}
