package tracein

import (
	"time"

	"golang.org/x/exp/trace"
)

// Time is a trace timestamp in nanoseconds on the trace clock (CLOCK_MONOTONIC
// on Linux for Go 1.22+ traces).
type Time int64

// Sub returns t - u as a duration.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// GoID identifies a goroutine. NoGoroutine means none.
type GoID int64

// NoGoroutine is the GoID of events that have no current goroutine, such as
// netpoller and timer wakeups.
const NoGoroutine GoID = -1

// TaskID identifies a runtime/trace task. NoTask means none; BackgroundTask
// is the implicit task of events logged without a task.
type TaskID uint64

// Task sentinels, as in golang.org/x/exp/trace.
const (
	NoTask         TaskID = ^TaskID(0)
	BackgroundTask TaskID = 0
)

// StackID indexes a Stacks table. NoStack (0) is the empty stack.
type StackID uint32

// NoStack is the StackID of an event without a stack.
const NoStack StackID = 0

// State is a goroutine state.
type State uint8

// Goroutine states, mirroring golang.org/x/exp/trace.GoState.
const (
	Undetermined State = iota
	NotExist
	Runnable
	Running
	Waiting
	Syscall
)

var stateNames = [...]string{
	Undetermined: "undetermined",
	NotExist:     "notexist",
	Runnable:     "runnable",
	Running:      "running",
	Waiting:      "waiting",
	Syscall:      "syscall",
}

// String returns the lower-case state name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Kind is the kind of a record.
type Kind uint8

// Record kinds. Only the kinds an analysis needs are passed on.
const (
	KindSync        Kind = iota // a generation boundary; Time is its time
	KindGoState                 // a goroutine state transition
	KindTaskBegin               // runtime/trace.NewTask
	KindTaskEnd                 // (*trace.Task).End
	KindRegionBegin             // trace.StartRegion / WithRegion
	KindRegionEnd               // (*trace.Region).End
	KindLog                     // trace.Log
	KindSample                  // a CPU profile sample
	KindProcState               // a P starting (To=Running) or stopping (To=NotExist)
)

var kindNames = [...]string{
	KindSync: "Sync", KindGoState: "GoState", KindTaskBegin: "TaskBegin", KindTaskEnd: "TaskEnd",
	KindRegionBegin: "RegionBegin", KindRegionEnd: "RegionEnd", KindLog: "Log", KindSample: "Sample",
	KindProcState: "ProcState",
}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Event is one copied-out trace record. Which fields are set depends on Kind:
//
//   - KindGoState: G is the goroutine changing state From→To; Actor is the
//     goroutine that was running when it happened (the waker on
//     Waiting→Runnable, the creator on NotExist→Runnable, NoGoroutine for the
//     netpoller and timers); Stack is G's stack (the blocking stack on
//     →Waiting, the start stack on creation); ActorStack is Actor's stack.
//     Reason is the runtime's reason string.
//   - KindTaskBegin/End: Task, Parent, Name (the task type); G is the
//     goroutine that called it, Stack its stack at the call.
//   - KindRegionBegin/End: Task, Name (the region type), G, Stack.
//   - KindLog: Task, Name (the category), Message, G, Stack.
//   - KindSample: G (may be NoGoroutine), Stack.
//   - KindProcState: Proc and From/To (Running when a P starts, NotExist when
//     it stops).
//   - KindSync: Wall is the wall-clock time of the trace clock reading Time,
//     when the trace has a clock snapshot (Go 1.25+).
type Event struct {
	Kind       Kind
	From, To   State
	Time       Time
	G, Actor   GoID
	Thread     int64
	Proc       int64
	Stack      StackID
	ActorStack StackID
	Task       TaskID
	Parent     TaskID
	Name       string
	Reason     string
	Message    string
	Wall       time.Time

	// raw and rawActor are the trace's stacks of Stack and ActorStack until
	// Stacks.Resolve interns them.
	raw, rawActor trace.Stack
}
