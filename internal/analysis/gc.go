package analysis

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// While a read loop runs, the collector works to a memory limit rather
// than in proportion to the live heap: the loop's live heap is mostly the
// decoder's batches of raw trace bytes, and the default GOGC of 100 lets
// the heap grow to twice what is live (peak RSS 175–195 MiB on the 100 MiB
// lab/bench/gentrace trace); GOGC 40 held it to 120–130 MiB at the cost of
// a collection every few MiB allocated (about 40 on that trace, with the
// write barrier on for 7 % of the run). A limit of memLimit with GOGC at
// 100 collects only when the heap nears the limit: half the collections,
// peak RSS about the same (docs/performance.md, issue #31). So that a
// larger live heap (a trace with many long requests open) does not make
// the collector run without pause under the limit, the loop raises the
// limit with the live heap (gcTuner.check): to liveFactor times it, the
// proportion GOGC 40 kept.
//
// The environment wins: with GOGC or GOMEMLIMIT set, nothing is changed.
const (
	memLimit    = 120 << 20
	liveFactor  = 1.4
	checkEvery  = 64 // batches between two looks at the live heap
	gcPercentOn = 100
)

// The collector's settings are the process's: the first read loop to start
// sets them, the last to end restores them.
var gc struct {
	sync.Mutex
	users     int
	prevPct   int
	prevLimit int64
	limit     int64 // in force
}

// lowerGC sets the collector to work to memLimit while a read loop runs,
// unless GOGC or GOMEMLIMIT is set in the environment or GC is off, and
// returns the function that restores it.
func lowerGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc.Lock()
	defer gc.Unlock()
	if gc.users == 0 {
		gc.prevPct = debug.SetGCPercent(gcPercentOn)
		if gc.prevPct < 0 { // off: keep it so
			debug.SetGCPercent(gc.prevPct)
		}
		gc.prevLimit = debug.SetMemoryLimit(memLimit)
		if gc.prevLimit < memLimit { // a lower limit set by the program: keep it
			debug.SetMemoryLimit(gc.prevLimit)
		}
		gc.limit = min(gc.prevLimit, memLimit)
	}
	gc.users++
	return func() {
		gc.Lock()
		defer gc.Unlock()
		if gc.users--; gc.users == 0 {
			debug.SetGCPercent(gc.prevPct)
			debug.SetMemoryLimit(gc.prevLimit)
		}
	}
}

// gcTuner raises the memory limit with the live heap (see above); one per
// read loop, on its goroutine.
type gcTuner struct {
	batches int
	sample  []metrics.Sample
}

// batch counts a batch read and, every checkEvery, looks at the live heap.
func (t *gcTuner) batch() {
	if t.batches++; t.batches%checkEvery != 0 {
		return
	}
	t.check()
}

// check raises the limit to liveFactor times the live heap when that is
// above the limit in force.
func (t *gcTuner) check() {
	if t.sample == nil {
		t.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := t.sample[0].Value.Uint64()
	gc.Lock()
	defer gc.Unlock()
	if gc.users == 0 {
		return
	}
	if l, ok := raised(gc.limit, gc.prevLimit, live); ok {
		gc.limit = l
		debug.SetMemoryLimit(l)
	}
}

// raised returns the memory limit for a live heap of live bytes, and true,
// when it is above the limit in force (inForce) and ours to change: the
// limit in force is below the program's own (ceiling), which it never
// passes.
func raised(inForce, ceiling int64, live uint64) (int64, bool) {
	want := int64(math.Min(liveFactor*float64(live), math.MaxInt64/2))
	if inForce >= ceiling || want <= inForce {
		return inForce, false
	}
	return min(want, ceiling), true
}
