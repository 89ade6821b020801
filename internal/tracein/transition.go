package tracein

import (
	"reflect"
	"unsafe"

	"golang.org/x/exp/trace"
)

// Event.StateTransition copies the 80-byte event and builds a 72-byte
// answer for every state transition, most of a trace's events; for the
// common goroutine and proc transitions the answer is a function of the
// event's wire-format type alone, its execution context and its first
// argument. convert reads those in place instead, through eventHead, as
// recipes says for each type: x/exp/trace's Event.StateTransition, written
// out for the types whose states are fixed (its internal tracev2 numbers).
//
// The recipes are checked against the method: a Converter asks the method
// for the first checks events of each type and compares the records; if
// any differ (an x/exp/trace whose numbering or layout moved), it uses the
// method for every event from then on. TestTransitions compares every
// event of the test traces.

// recipe is how one wire-format type's transition reads.
type recipe struct {
	kind     uint8 // 0: no recipe (the method); recipeGo, recipeProc
	argRes   bool  // the resource is args[0], else the execution context's
	from, to State
	reason   bool // the reason is the string of args[0]
	stack    bool // the transition's stack is the event's (Event.Stack)
	// stackArg is the argument holding the event's stack (Event.Stack's
	// first of the type's stack IDs), -1 for none
	stackArg int8
}

const (
	recipeGo = 1 + iota
	recipeProc
)

// recipes, by x/exp/trace's wire-format event type (internal/tracev2).
var recipes = func() (r [256]recipe) {
	const (
		evProcStart           = 10
		evProcStop            = 11
		evGoStart             = 16
		evGoDestroy           = 17
		evGoStop              = 19
		evGoBlock             = 20
		evGoUnblock           = 21
		evGoSyscallBegin      = 22
		evGoSyscallEnd        = 23
		evGoSyscallEndBlocked = 24
	)
	r[evProcStart] = recipe{kind: recipeProc, argRes: true, from: NotExist, to: Running, stackArg: -1}
	r[evProcStop] = recipe{kind: recipeProc, from: Running, to: NotExist, stackArg: -1}
	r[evGoStart] = recipe{kind: recipeGo, argRes: true, from: State(trace.GoRunnable), to: State(trace.GoRunning), stackArg: -1}
	r[evGoDestroy] = recipe{kind: recipeGo, from: State(trace.GoRunning), to: State(trace.GoNotExist), stackArg: -1}
	r[evGoStop] = recipe{kind: recipeGo, from: State(trace.GoRunning), to: State(trace.GoRunnable), reason: true, stack: true, stackArg: 1}
	r[evGoBlock] = recipe{kind: recipeGo, from: State(trace.GoRunning), to: State(trace.GoWaiting), reason: true, stack: true, stackArg: 1}
	r[evGoUnblock] = recipe{kind: recipeGo, argRes: true, from: State(trace.GoWaiting), to: State(trace.GoRunnable), stackArg: 2}
	r[evGoSyscallBegin] = recipe{kind: recipeGo, from: State(trace.GoRunning), to: State(trace.GoSyscall), stack: true, stackArg: 1}
	r[evGoSyscallEnd] = recipe{kind: recipeGo, from: State(trace.GoSyscall), to: State(trace.GoRunning), stackArg: -1}
	r[evGoSyscallEndBlocked] = recipe{kind: recipeGo, from: State(trace.GoSyscall), to: State(trace.GoRunnable), stackArg: -1}
	return r
}()

// checks is the number of events of each type a Converter compares with
// the method before it trusts the type's recipe.
const checks = 16

// transitions is a Converter's state for the recipes.
type transitions struct {
	off     bool            // a check failed: the method for every event
	checked [256]uint8      // events of each type checked
	table   unsafe.Pointer  // the generation whose reasons are cached
	reasons [64]reasonEntry // by the string's ID, for table
}

// reasonEntry is a cached reason string.
type reasonEntry struct {
	id  uint64
	s   string
	set bool
}

// fast writes ev's transition into out by its recipe rc, as convert's
// method path would; h is ev's head.
func (tc *transitions) fast(rc *recipe, ev *trace.Event, h *eventHead, out *Event) {
	if rc.kind == recipeProc {
		out.Kind = KindProcState
		if rc.argRes {
			out.Proc = int64(h.args[0])
		}
		out.From, out.To = rc.from, rc.to
		return
	}
	out.Kind = KindGoState
	out.Actor = out.G
	if rc.argRes {
		out.G = GoID(h.args[0])
	}
	out.From, out.To = rc.from, rc.to
	if rc.reason {
		out.Reason = tc.reason(h, ev)
	}
	if rc.stack {
		out.raw = eventStack(rc, h, ev)
	}
	if out.Actor != NoGoroutine && out.Actor != out.G {
		out.rawActor = eventStack(rc, h, ev)
	}
}

// stackHead mirrors trace.Stack: its generation's table and the stack's ID.
type stackHead struct {
	table unsafe.Pointer
	id    uint64
}

// stackOK reports whether stackHead matches trace.Stack's layout.
var stackOK = func() bool {
	t := reflect.TypeFor[trace.Stack]()
	var s stackHead
	if t.Size() != unsafe.Sizeof(s) || t.NumField() != 2 {
		return false
	}
	f0, f1 := t.Field(0), t.Field(1)
	return f0.Name == "table" && f0.Offset == unsafe.Offsetof(s.table) && f0.Type.Kind() == reflect.Pointer &&
		f1.Name == "id" && f1.Offset == unsafe.Offsetof(s.id) && f1.Type.Kind() == reflect.Uint64
}()

// eventStack is ev.Stack() by its recipe rc: the stack in the argument
// rc names, none for ID 0.
func eventStack(rc *recipe, h *eventHead, ev *trace.Event) trace.Stack {
	if !stackOK {
		return ev.Stack()
	}
	if rc.stackArg < 0 || h.args[rc.stackArg] == 0 {
		return trace.NoStack
	}
	s := stackHead{h.table, h.args[rc.stackArg]}
	return *(*trace.Stack)(unsafe.Pointer(&s))
}

// reason returns the reason of ev, a transition whose reason is the
// string of its first argument, from the cache of ev's generation's
// strings (the method on a miss).
func (tc *transitions) reason(h *eventHead, ev *trace.Event) string {
	if h.table != tc.table {
		tc.table = h.table
		tc.reasons = [64]reasonEntry{}
	}
	id := h.args[0]
	e := &tc.reasons[id%64]
	if !e.set || e.id != id {
		*e = reasonEntry{id: id, s: ev.StateTransition().Reason, set: true}
	}
	return e.s
}

// check compares out, written by the method from base (kept: it kept
// the event), with what ev's recipe rc writes from base, and turns the
// recipes off if they differ.
func (tc *transitions) check(rc *recipe, ev *trace.Event, h *eventHead, base Event, out *Event, kept bool) {
	tc.checked[h.typ]++
	tc.fast(rc, ev, h, &base)
	if !kept || base != *out {
		tc.off = true
	}
}
