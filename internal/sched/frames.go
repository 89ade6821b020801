package sched

import (
	"strings"

	"github.com/latscope/latscope/internal/frame"
)

// Class is what a CPU sample was spent on.
type Class uint8

// Classes. Other is the application and every part of the runtime the frame
// table does not list (allocation, maps, channels' fast paths, syscalls).
const (
	ClassOther      Class = iota
	ClassScheduler        // finding, parking and waking goroutines and threads
	ClassGC               // marking, assisting, sweeping, scavenging
	ClassInstrument       // the execution tracer and the CPU profiler themselves
	numClasses
)

// NumClasses is the number of classes, for arrays indexed by Class.
const NumClasses = int(numClasses)

var classNames = [...]string{
	ClassOther: "other", ClassScheduler: "scheduler", ClassGC: "GC", ClassInstrument: "instrumentation",
}

// String returns the class's name as printed in tables and JSON.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// MarshalText encodes the class by name.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Group is a part of a class: what the runtime was doing.
type Group uint8

// Groups. Each belongs to one Class (Group.Class).
const (
	GroupNone     Group = iota // not in the table
	GroupFindWork              // schedule/findRunnable: run queues, stealing, polling the network
	GroupThreads               // OS threads: stopm/startm/wakep, notes, futex
	GroupHandoff               // goroutines: gopark/park_m, goready/ready, yields and preemption
	GroupSpawn                 // goroutines created and exited: newproc, goexit0, the free-G lists
	GroupTimers                // the runtime's timer heaps, run by the scheduler
	GroupSysmon                // the sysmon thread: retaking Ps, preempting
	GroupGCMark                // marking, including mark assists
	GroupGCSweep               // sweeping and scavenging
	GroupTracer                // runtime/trace and the runtime's trace writer
	GroupProfiler              // the CPU profiler's signal handler and writer
	numGroups
)

// NumGroups is the number of groups, for arrays indexed by Group.
const NumGroups = int(numGroups)

var groupNames = [...]string{
	GroupNone: "none", GroupFindWork: "find work", GroupThreads: "thread park/wake",
	GroupHandoff: "goroutine park/ready", GroupSpawn: "goroutine create/exit", GroupTimers: "timers",
	GroupSysmon: "sysmon", GroupGCMark: "GC mark", GroupGCSweep: "GC sweep/scavenge",
	GroupTracer: "tracer", GroupProfiler: "profiler",
}

var groupClasses = [...]Class{
	GroupNone: ClassOther, GroupFindWork: ClassScheduler, GroupThreads: ClassScheduler,
	GroupHandoff: ClassScheduler, GroupSpawn: ClassScheduler, GroupTimers: ClassScheduler,
	GroupSysmon: ClassScheduler, GroupGCMark: ClassGC, GroupGCSweep: ClassGC,
	GroupTracer: ClassInstrument, GroupProfiler: ClassInstrument,
}

// String returns the group's name as printed in tables and JSON.
func (g Group) String() string {
	if int(g) < len(groupNames) {
		return groupNames[g]
	}
	return "none"
}

// MarshalText encodes the group by name.
func (g Group) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// Class returns the class the group belongs to.
func (g Group) Class() Class {
	if int(g) < len(groupClasses) {
		return groupClasses[g]
	}
	return ClassOther
}

// Pattern is one row of the frame table. Func is a fully qualified function
// name. Without Prefix it matches that function and its closures
// ("runtime.newproc" matches "runtime.newproc.func1"); with Prefix it matches
// every name that starts with Func. A row with GroupNone excludes the names
// it matches from the rows after it, so the frame's caller decides. A Root
// row names the entry function of a goroutine that only the runtime's
// instrumentation runs; it matches anywhere on the stack (Frames.Classify).
type Pattern struct {
	Func   string
	Prefix bool
	Root   bool
	Group  Group
}

// DefaultPatterns is the frame table (docs/sched.md explains each row). A
// sample belongs to the innermost frame on its stack that matches a row, so
// a futex under findRunnable is thread parking, a findRunnable under
// gcBgMarkWorker is the scheduler, and a scanobject under mallocgc is GC.
var DefaultPatterns = []Pattern{
	// find work: the scheduler loop looking for a goroutine to run
	{Func: "runtime.schedule", Group: GroupFindWork},
	{Func: "runtime.findRunnable", Group: GroupFindWork},
	{Func: "runtime.findrunnable", Group: GroupFindWork}, // before Go 1.21
	{Func: "runtime.stealWork", Group: GroupFindWork},
	{Func: "runtime.runqgrab", Group: GroupFindWork},
	{Func: "runtime.runqsteal", Group: GroupFindWork},
	{Func: "runtime.runqget", Group: GroupFindWork},
	{Func: "runtime.globrunqget", Group: GroupFindWork},
	{Func: "runtime.globrunqgetbatch", Group: GroupFindWork},
	{Func: "runtime.checkRunqsNoP", Group: GroupFindWork},
	{Func: "runtime.checkTimersNoP", Group: GroupFindWork},
	{Func: "runtime.checkIdleGCNoP", Group: GroupFindWork},
	{Func: "runtime.pollWork", Group: GroupFindWork},
	{Func: "runtime.netpoll", Group: GroupFindWork},
	{Func: "runtime.injectglist", Group: GroupFindWork},
	{Func: "runtime.resetspinning", Group: GroupFindWork},
	{Func: "runtime.execute", Group: GroupFindWork},
	// thread park/wake: Ms sleeping and being woken (Unsafe.park/unpark in the seed)
	{Func: "runtime.stopm", Group: GroupThreads},
	{Func: "runtime.startm", Group: GroupThreads},
	{Func: "runtime.wakep", Group: GroupThreads},
	{Func: "runtime.mPark", Group: GroupThreads},
	{Func: "runtime.mspinning", Group: GroupThreads},
	{Func: "runtime.handoffp", Group: GroupThreads},
	{Func: "runtime.acquirep", Group: GroupThreads},
	{Func: "runtime.releasep", Group: GroupThreads},
	{Func: "runtime.releasepNoTrace", Group: GroupThreads},
	{Func: "runtime.pidleget", Group: GroupThreads},
	{Func: "runtime.pidlegetSpinning", Group: GroupThreads},
	{Func: "runtime.pidleput", Group: GroupThreads},
	{Func: "runtime.stoplockedm", Group: GroupThreads},
	{Func: "runtime.startlockedm", Group: GroupThreads},
	{Func: "runtime.newm", Group: GroupThreads},
	{Func: "runtime.newm1", Group: GroupThreads},
	{Func: "runtime.newosproc", Group: GroupThreads},
	{Func: "runtime.notesleep", Group: GroupThreads},
	{Func: "runtime.notetsleep", Group: GroupThreads},
	{Func: "runtime.notetsleepg", Group: GroupThreads},
	{Func: "runtime.notetsleep_internal", Group: GroupThreads},
	{Func: "runtime.notewakeup", Group: GroupThreads},
	{Func: "runtime.futexsleep", Group: GroupThreads},
	{Func: "runtime.futexwakeup", Group: GroupThreads},
	{Func: "runtime.futex", Group: GroupThreads},
	{Func: "runtime.semasleep", Group: GroupThreads},
	{Func: "runtime.semawakeup", Group: GroupThreads},
	{Func: "runtime.wakeNetPoller", Group: GroupThreads},
	{Func: "runtime.netpollBreak", Group: GroupThreads},
	// goroutine park/ready: blocking and unblocking goroutines
	{Func: "runtime.gopark", Group: GroupHandoff},
	{Func: "runtime.park_m", Group: GroupHandoff},
	{Func: "runtime.mcall", Group: GroupHandoff},
	{Func: "runtime.goready", Group: GroupHandoff},
	{Func: "runtime.ready", Group: GroupHandoff},
	{Func: "runtime.readyWithTime", Group: GroupHandoff},
	{Func: "runtime.Gosched", Group: GroupHandoff},
	{Func: "runtime.goschedImpl", Group: GroupHandoff},
	{Func: "runtime.gosched_m", Group: GroupHandoff},
	{Func: "runtime.goschedguarded_m", Group: GroupHandoff},
	{Func: "runtime.goyield_m", Group: GroupHandoff},
	{Func: "runtime.gopreempt_m", Group: GroupHandoff},
	{Func: "runtime.preemptPark", Group: GroupHandoff},
	// goroutine create/exit: the cost of `go f()` and of returning from f
	{Func: "runtime.newproc", Group: GroupSpawn},
	{Func: "runtime.newproc1", Group: GroupSpawn},
	{Func: "runtime.malg", Group: GroupSpawn},
	{Func: "runtime.gfget", Group: GroupSpawn},
	{Func: "runtime.gfput", Group: GroupSpawn},
	{Func: "runtime.gfpurge", Group: GroupSpawn},
	{Func: "runtime.goexit0", Group: GroupSpawn},
	{Func: "runtime.goexit1", Group: GroupSpawn},
	{Func: "runtime.gdestroy", Group: GroupSpawn},
	// timers, run from the scheduler loop
	{Func: "runtime.(*timers).", Prefix: true, Group: GroupTimers},
	{Func: "runtime.(*timer).", Prefix: true, Group: GroupTimers},
	// sysmon
	{Func: "runtime.sysmon", Group: GroupSysmon},
	{Func: "runtime.retake", Group: GroupSysmon},
	{Func: "runtime.preemptone", Group: GroupSysmon},
	{Func: "runtime.preemptM", Group: GroupSysmon},
	// GC mark (runtime.gc* covers gcBgMarkWorker, gcDrain*, gcAssistAlloc*, gcStart, gcMarkDone, ...)
	{Func: "runtime.gcount", Group: GroupNone}, // counts goroutines, called by the scheduler
	{Func: "runtime.gc", Prefix: true, Group: GroupGCMark},
	{Func: "runtime.(*gc", Prefix: true, Group: GroupGCMark},
	{Func: "runtime.markroot", Prefix: true, Group: GroupGCMark},
	{Func: "runtime.scan", Prefix: true, Group: GroupGCMark},
	{Func: "runtime.tryDeferToSpanScan", Group: GroupGCMark},
	{Func: "runtime.(*spanQueue).", Prefix: true, Group: GroupGCMark},
	{Func: "runtime.greyobject", Group: GroupGCMark},
	{Func: "runtime.shade", Group: GroupGCMark},
	{Func: "runtime.wbBufFlush", Group: GroupGCMark},
	{Func: "runtime.wbBufFlush1", Group: GroupGCMark},
	// GC sweep and scavenge
	{Func: "runtime.bgsweep", Group: GroupGCSweep},
	{Func: "runtime.sweepone", Group: GroupGCSweep},
	{Func: "runtime.(*sweepLocked).sweep", Group: GroupGCSweep},
	{Func: "runtime.(*mspan).ensureSwept", Group: GroupGCSweep},
	{Func: "runtime.deductSweepCredit", Group: GroupGCSweep},
	{Func: "runtime.(*mheap).reclaim", Group: GroupGCSweep},
	{Func: "runtime.finishsweep_m", Group: GroupGCSweep},
	{Func: "runtime.freeSomeWbufs", Group: GroupGCSweep},
	{Func: "runtime.bgscavenge", Group: GroupGCSweep},
	{Func: "runtime.(*scavengerState).", Prefix: true, Group: GroupGCSweep},
	{Func: "runtime._GC", Group: GroupGCMark}, // pprof's pseudo-frame for GC samples without a stack
	// instrumentation: what measuring costs, kept out of the other classes
	{Func: "runtime.traceback", Prefix: true, Group: GroupNone}, // stack walks: the caller decides
	{Func: "runtime.trace", Prefix: true, Group: GroupTracer},
	{Func: "runtime.(*trace", Prefix: true, Group: GroupTracer},
	{Func: "runtime/trace.", Prefix: true, Group: GroupTracer},
	{Func: "runtime.sigprof", Group: GroupProfiler},
	{Func: "runtime.(*cpuProfile).", Prefix: true, Group: GroupProfiler},
	{Func: "runtime.(*profBuf).", Prefix: true, Group: GroupProfiler},
	{Func: "runtime/pprof.", Prefix: true, Group: GroupProfiler},
	// goroutines that only instrumentation runs, whatever their leaf frames
	{Func: "runtime/pprof.profileWriter", Root: true, Group: GroupProfiler},
	{Func: "runtime/trace.(*traceMultiplexer).startLocked", Root: true, Group: GroupTracer},
	{Func: "runtime.traceStartReadCPU", Root: true, Group: GroupTracer},
	{Func: "runtime.(*traceAdvancerState).start", Root: true, Group: GroupTracer},
}

// Frames is a compiled frame table.
type Frames struct {
	leaf, root table
}

// table is one set of rows: exact names first, then prefixes in order.
type table struct {
	exact    map[string]Group
	prefixes []Pattern
}

// DefaultFrames is DefaultPatterns compiled.
var DefaultFrames = NewFrames(DefaultPatterns)

// NewFrames compiles a frame table. Exact rows are looked up first (a later
// row for the same function wins), then prefix rows in order.
func NewFrames(ps []Pattern) *Frames {
	f := &Frames{leaf: table{exact: map[string]Group{}}, root: table{exact: map[string]Group{}}}
	for _, p := range ps {
		t := &f.leaf
		if p.Root {
			t = &f.root
		}
		if p.Prefix {
			t.prefixes = append(t.prefixes, p)
		} else {
			t.exact[p.Func] = p.Group
		}
	}
	return f
}

// Match is the outcome of Frames.Classify.
type Match struct {
	Group Group
	Frame string // the function that matched; "" for GroupNone
	Depth int    // its index in the stack (0 = leaf); -1 for GroupNone
}

// Classify decides the group of a stack given as function names, leaf
// first. The innermost frame that a row matches decides, among the leaf
// frames that belong to the runtime (Internal): the walk stops at the first
// frame of other code, so runtime/trace.WithRegion or a goroutine's
// creation wrapper beneath the application never claims its CPU. When those
// match nothing, Root rows are tried on every frame, innermost first.
func (f *Frames) Classify(funcs []string) Match {
	for i, fn := range funcs {
		if !Internal(fn) {
			break
		}
		if g, ok := f.leaf.lookup(fn); ok {
			return Match{Group: g, Frame: fn, Depth: i}
		}
	}
	for i, fn := range funcs {
		if g, ok := f.root.lookup(fn); ok {
			return Match{Group: g, Frame: fn, Depth: i}
		}
	}
	return Match{Group: GroupNone, Depth: -1}
}

// Lookup returns the group of one function name among the leaf rows; ok is
// false when no row, or a GroupNone row, matches.
func (f *Frames) Lookup(fn string) (g Group, ok bool) { return f.leaf.lookup(fn) }

func (t *table) lookup(fn string) (Group, bool) {
	if g, ok := t.exact[fn]; ok {
		return g, g != GroupNone
	}
	if i := strings.Index(fn, ".func"); i > 0 {
		if g, ok := t.exact[fn[:i]]; ok {
			return g, g != GroupNone
		}
	}
	for _, p := range t.prefixes {
		if strings.HasPrefix(fn, p.Func) {
			return p.Group, p.Group != GroupNone
		}
	}
	return GroupNone, false
}

// Internal reports whether fn belongs to the runtime and its support
// packages (runtime, runtime/..., internal/runtime/..., internal/abi,
// internal/bytealg, internal/cpu, internal/goarch) or is an assembly body
// without a package ("indexbytebody").
func Internal(fn string) bool {
	pkg := frame.Package(fn)
	if pkg == fn && !strings.Contains(fn, ".") {
		return true
	}
	switch pkg {
	case "runtime", "internal/abi", "internal/bytealg", "internal/cpu", "internal/goarch":
		return true
	}
	return strings.HasPrefix(pkg, "runtime/") || strings.HasPrefix(pkg, "internal/runtime/")
}
