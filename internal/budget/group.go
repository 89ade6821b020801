package budget

import (
	"encoding/binary"
	"reflect"
	"unsafe"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// groupState accumulates the requests of one request type.
type groupState struct {
	name           string
	inferred       bool
	excludedBefore int // ended in the trace, began before it
	excludedAfter  int // began in the trace, still open at its end
	begins         []tracein.Time
	Book           // what the Go and JVM analyses book alike
	running        int64
	runnable       int64
	critRunning    int64
	critRunnable   int64
	// cpuFrom is running time with a CPU term, by how its frame was found
	// (critpath.CPUFrom); critCPU the part of critRunning with one.
	cpuFrom   [3]int64
	critCPU   int64
	overfull  int
	samples   int
	regions   []regionAcc                 // by region id
	stacks    []*[frame.NumKinds]stackAcc // by StackID
	cpuStacks map[tracein.StackID]int
	slowest   *Path
	reservoir []*keptPath
	seen      int
	rng       uint64
	// grpc-go's transport outside the requests (transport.go): ns summed
	// and the requests each sum is over.
	rpcBefore, rpcAfter   int64
	rpcBeforeN, rpcAfterN int
	// before sums the requests' runnable time before they began, over the
	// beforeN requests a task began (RunnableBefore).
	before  int64
	beforeN int
	// slowTraces: the slowest requests with a trace ID (keepSlow); traced
	// counts the requests with one.
	slowTraces []TracedRequest
	traced     int
}

type termAcc struct {
	wait, crit, fix, contention int64
	cpu                         int64 // measured inside the term (TermStat.CPU)
	along                       int64 // critical running time along with a CPU term (TermStat.Along)
	alongRunnable               int64 // its runnable part: preemptions inside the frame (TermStat.AlongRunnable)
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
		gs.Pred = make([][]int64, len(a.opts.Predictions))
		a.groups[name] = gs
	}
	return gs
}

func (gs *groupState) region(id int32) *regionAcc {
	for int(id) >= len(gs.regions) {
		gs.regions = append(gs.regions, regionAcc{})
	}
	return &gs.regions[id]
}

// keepPath keeps the slowest request's path and a reservoir sample of the
// others (deterministic, so output is reproducible). The reservoir's paths
// are kept packed (packSegs): only the one nearest the median latency is
// shown, and a critical path's segment is 112 bytes, most of them zero or
// its neighbour's.
func (gs *groupState) keepPath(r *reqState, req *critpath.Request, path []critpath.PathSeg, capacity int) {
	lat := req.Latency()
	meta := Path{Task: r.task, TraceID: r.traceID, Begin: req.Begin, End: req.End, Latency: lat, Goroutines: countCommitted(req)}
	if gs.slowest == nil || lat > gs.slowest.Latency {
		// The slowest path is referred to by nothing else when replaced:
		// its segments' array is reused.
		p := gs.slowest
		if p == nil || cap(p.Segs) < len(path) {
			p = &Path{Segs: make([]critpath.PathSeg, len(path))}
		}
		segs := p.Segs[:len(path)]
		for i, s := range path { // chronological
			segs[len(path)-1-i] = s
		}
		*p = meta
		p.Segs = segs
		gs.slowest = p
	}
	// keep packs the path, in old's place when given (a reservoir entry
	// replaced is referred to by nothing else).
	keep := func(old *keptPath) *keptPath {
		k := old
		if k == nil {
			k = &keptPath{}
		}
		k.meta, k.n, k.packed = meta, len(path), packSegs(k.packed[:0], path)
		return k
	}
	gs.seen++
	if len(gs.reservoir) < capacity {
		gs.reservoir = append(gs.reservoir, keep(nil))
		return
	}
	gs.rng ^= gs.rng << 13
	gs.rng ^= gs.rng >> 7
	gs.rng ^= gs.rng << 17
	if j := int(gs.rng % uint64(gs.seen)); j < capacity {
		gs.reservoir[j] = keep(gs.reservoir[j])
	}
}

// keptPath is a path of the reservoir: the Path without its segments, and
// the n segments packed (packSegs).
type keptPath struct {
	meta   Path
	n      int
	packed []byte
}

// path returns the kept path with its segments unpacked.
func (k *keptPath) path() *Path {
	p := k.meta
	p.Segs = unpackSegs(k.packed, k.n)
	return &p
}

// segWords is the size of a critpath.PathSeg in 64-bit words.
const segWords = int(unsafe.Sizeof(critpath.PathSeg{}) / 8)

// packSegs appends path, reversed (chronological), to dst as words: for
// each segment, a varint mask of the 64-bit words of its memory that
// differ from the segment before's, then each of those words' difference
// as a varint. Times grow a little from segment to segment and most other
// fields repeat or are zero, so a segment of 112 bytes takes about 12. It
// is exact for any values (the bytes come back as they were), and sound
// because a PathSeg is plain data (see init).
func packSegs(dst []byte, path []critpath.PathSeg) []byte {
	var prev [segWords]uint64
	for i := len(path) - 1; i >= 0; i-- {
		w := (*[segWords]uint64)(unsafe.Pointer(&path[i]))
		var mask uint64
		for j, x := range w {
			if x != prev[j] {
				mask |= 1 << j
			}
		}
		dst = binary.AppendUvarint(dst, mask)
		for j, x := range w {
			if mask&(1<<j) != 0 {
				dst = binary.AppendVarint(dst, int64(x-prev[j]))
			}
		}
		prev = *w
	}
	return dst
}

// unpackSegs returns the n segments packSegs packed in b, in its order.
func unpackSegs(b []byte, n int) []critpath.PathSeg {
	segs := make([]critpath.PathSeg, n)
	var prev [segWords]uint64
	next := func() uint64 {
		d, k := binary.Varint(b)
		if k <= 0 {
			panic("budget: a packed path is damaged")
		}
		b = b[k:]
		return uint64(d)
	}
	for i := range segs {
		mask, k := binary.Uvarint(b)
		if k <= 0 {
			panic("budget: a packed path is damaged")
		}
		b = b[k:]
		w := (*[segWords]uint64)(unsafe.Pointer(&segs[i]))
		for j := range w {
			w[j] = prev[j]
			if mask&(1<<j) != 0 {
				w[j] += next()
			}
		}
		prev = *w
	}
	return segs
}

// The packing of paths reads a PathSeg's memory as words: it must be a
// whole number of words, 8-byte aligned, and hold no pointer (no string,
// slice, map, interface, …) for the collector to miss.
func init() {
	var s critpath.PathSeg
	if unsafe.Sizeof(s)%8 != 0 || unsafe.Alignof(s) != 8 || segWords > 64 || !plain(reflect.TypeOf(s)) {
		panic("budget: critpath.PathSeg is no longer plain words of data; packSegs cannot pack it")
	}
}

// plain reports whether t holds only numbers and booleans.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
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
