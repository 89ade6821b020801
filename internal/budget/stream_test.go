package budget_test

import (
	"testing"

	"golang.org/x/exp/trace"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
)

// stream builds a synthetic record stream for the analyser: goroutine state
// transitions, tasks and stacks, with times given in whole milliseconds from
// the start of the trace. It needs no trace file and no clock: stacks are
// interned through the same exported path as a real trace's
// (trace.MakeStack → tracein.Converter → Stacks.Resolve), and every other
// record is a tracein.Event literal.
type stream struct {
	t      *testing.T
	stacks *tracein.Stacks
	evs    []tracein.Event
}

func newStream(t *testing.T) *stream {
	t.Helper()
	return &stream{t: t, stacks: tracein.NewStacks()}
}

// msec is one millisecond on the trace clock.
const msec = tracein.Time(1e6)

// Source files: application frames are compiled from the service's own
// source, everything else from the Go root, as in a real binary.
const (
	appFile = "/src/svc/main.go"
	stdFile = "/usr/local/go/src/lib.go"
)

// stack interns a stack given as function names, leaf first. Functions of
// package main are the application's; the rest are the standard library's.
func (s *stream) stack(funcs ...string) tracein.StackID {
	s.t.Helper()
	frames := make([]trace.StackFrame, len(funcs))
	for i, fn := range funcs {
		file := stdFile
		if len(fn) > 5 && fn[:5] == "main." {
			file = appFile
		}
		frames[i] = trace.StackFrame{PC: uint64(0x1000 + 16*i), Func: fn, File: file, Line: uint64(10 + i)}
	}
	ev, err := trace.MakeEvent(trace.EventConfig[trace.StackSample]{
		Kind: trace.EventStackSample, Goroutine: 1, Stack: trace.MakeStack(frames),
	})
	if err != nil {
		s.t.Fatalf("making a stack sample: %v", err)
	}
	recs := make([]tracein.Event, 1)
	var conv tracein.Converter
	n, err := conv.Convert("synthetic", []trace.Event{ev}, recs)
	if err != nil || n != 1 {
		s.t.Fatalf("converting a stack sample: %d record(s), %v", n, err)
	}
	if _, err := s.stacks.Resolve(recs[:1]); err != nil {
		s.t.Fatalf("resolving a stack: %v", err)
	}
	if recs[0].Stack == tracein.NoStack {
		s.t.Fatalf("stack %q was not interned", funcs)
	}
	return recs[0].Stack
}

// emit appends one goroutine state transition of g at ms, by actor.
func (s *stream) emit(ms tracein.Time, g tracein.GoID, from, to tracein.State, actor tracein.GoID, st tracein.StackID, reason string) {
	s.evs = append(s.evs, tracein.Event{Kind: tracein.KindGoState, Time: ms * msec, G: g, Actor: actor,
		From: from, To: to, Stack: st, Reason: reason})
}

// status states g's state at the start of the trace (a goroutine that
// existed before it), with its blocking stack if it is waiting.
func (s *stream) status(ms tracein.Time, g tracein.GoID, to tracein.State, st tracein.StackID, reason string) {
	s.emit(ms, g, tracein.Undetermined, to, tracein.NoGoroutine, st, reason)
}

// create: parent creates g, which becomes runnable.
func (s *stream) create(ms tracein.Time, parent, g tracein.GoID, start tracein.StackID) {
	s.emit(ms, g, tracein.NotExist, tracein.Runnable, parent, start, "")
}

// start: the scheduler runs g.
func (s *stream) start(ms tracein.Time, g tracein.GoID) {
	s.emit(ms, g, tracein.Runnable, tracein.Running, tracein.NoGoroutine, tracein.NoStack, "")
}

// block: g stops running to wait for reason on stack st.
func (s *stream) block(ms tracein.Time, g tracein.GoID, reason string, st tracein.StackID) {
	s.emit(ms, g, tracein.Running, tracein.Waiting, g, st, reason)
}

// unblock: waker (tracein.NoGoroutine for the netpoller or a timer) makes
// g runnable.
func (s *stream) unblock(ms tracein.Time, g, waker tracein.GoID) {
	s.emit(ms, g, tracein.Waiting, tracein.Runnable, waker, tracein.NoStack, "")
}

// preempt: g is taken off its P while it could still run.
func (s *stream) preempt(ms tracein.Time, g tracein.GoID) {
	s.emit(ms, g, tracein.Running, tracein.Runnable, g, tracein.NoStack, "preempted")
}

// syscall: g enters a system call on stack st; sysret returns from it.
func (s *stream) syscall(ms tracein.Time, g tracein.GoID, st tracein.StackID) {
	s.emit(ms, g, tracein.Running, tracein.Syscall, g, st, "")
}

func (s *stream) sysret(ms tracein.Time, g tracein.GoID) {
	s.emit(ms, g, tracein.Syscall, tracein.Running, g, tracein.NoStack, "")
}

// exit: g returns from its function.
func (s *stream) exit(ms tracein.Time, g tracein.GoID) {
	s.emit(ms, g, tracein.Running, tracein.NotExist, g, tracein.NoStack, "")
}

// begin and end: g begins or ends task id of type name.
func (s *stream) begin(ms tracein.Time, g tracein.GoID, id tracein.TaskID, name string) {
	s.evs = append(s.evs, tracein.Event{Kind: tracein.KindTaskBegin, Time: ms * msec, G: g, Task: id,
		Parent: tracein.BackgroundTask, Name: name})
}

func (s *stream) end(ms tracein.Time, g tracein.GoID, id tracein.TaskID, name string) {
	s.evs = append(s.evs, tracein.Event{Kind: tracein.KindTaskEnd, Time: ms * msec, G: g, Task: id, Name: name})
}

// analyze feeds the stream to a new analyser with opts (the stacks are the
// stream's) and returns the result.
func (s *stream) analyze(opts budget.Options) *budget.Result {
	a := budget.New(opts, s.stacks)
	for i := range s.evs {
		a.Event(&s.evs[i])
	}
	return a.Finalize()
}
