package analysis

import (
	"os"
	"runtime/debug"
	"sync"
)

// gcPercent is the garbage collector's target (GOGC) while a read loop
// runs, unless the environment sets GOGC. The loop's live heap is mostly
// the decoder's batches of raw trace bytes, which hold no pointers, so a
// collection costs little CPU (about 1 % of the analysis on the 100 MiB
// lab/bench/gentrace trace at either setting), while the default of 100
// lets the heap grow to twice what is live: peak RSS 175–195 MiB there at
// 100, 130–145 MiB at 40 (docs/performance.md, issue #31).
const gcPercent = 40

// The collector's setting is the process's: the first read loop to start
// lowers it, the last to end restores it.
var gc struct {
	sync.Mutex
	users int
	prev  int
}

// lowerGC sets the collector's target to gcPercent, unless GOGC is set in
// the environment or the target is lower already, and returns the function
// that restores it.
func lowerGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gc.Lock()
	defer gc.Unlock()
	if gc.users == 0 {
		gc.prev = debug.SetGCPercent(gcPercent)
		if gc.prev < gcPercent { // off (negative) or lower: keep it
			debug.SetGCPercent(gc.prev)
		}
	}
	gc.users++
	return func() {
		gc.Lock()
		defer gc.Unlock()
		if gc.users--; gc.users == 0 {
			debug.SetGCPercent(gc.prev)
		}
	}
}
