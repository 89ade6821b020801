package tracein

import (
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/exp/trace"
)

// Frame is one stack frame.
type Frame struct {
	Func string
	File string
	Line uint64
}

// Stacks interns stacks across trace generations: the same sequence of frames
// gets the same StackID for the whole trace. Frames are ordered leaf first.
type Stacks struct {
	name   string                  // the input, for errors
	frames [][]Frame               // by StackID; frames[0] is the empty stack
	byKey  map[string]StackID      // frame-sequence key → id
	gen    map[trace.Stack]StackID // this generation's trace stacks → id
	key    strings.Builder
	// recent caches gen by a slot the trace stack's ID picks (stackHint):
	// a dense trace looks up a stack for most of its records, and the map
	// hashes a 16-byte key each time.
	recent [1 << 12]recentStack
}

// recentStack is a slot of Stacks.recent.
type recentStack struct {
	st trace.Stack
	id StackID
}

// NewStacks returns an empty table.
func NewStacks() *Stacks {
	return &Stacks{frames: [][]Frame{nil}, byKey: map[string]StackID{}, gen: map[trace.Stack]StackID{}}
}

// Frames returns the frames of id, leaf first. The slice must not be modified.
func (s *Stacks) Frames(id StackID) []Frame {
	if int(id) >= len(s.frames) {
		return nil
	}
	return s.frames[id]
}

// Len returns the number of distinct stacks, counting the empty stack.
func (s *Stacks) Len() int { return len(s.frames) }

// newGeneration forgets the per-generation cache: trace stack IDs are only
// unique within one generation.
func (s *Stacks) newGeneration() {
	clear(s.gen)
	clear(s.recent[:]) // a new generation's table may take an old one's address
}

// stackHint returns a number that tells trace stacks apart, to pick a slot
// of Stacks.recent: the last word of the value, which is the stack's ID in
// this generation in x/exp/trace's Stack{table, id}. A slot is used only
// when it holds the very stack asked for (==), so the hint can never give
// a wrong ID, only a slot that misses, whatever the Stack's layout.
func stackHint(st trace.Stack) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(&st), unsafe.Sizeof(st)-8))
}

// cached returns the StackID of st (not NoStack) when its slot of recent
// holds it: intern's first look, small enough to be inlined into Resolve's
// loop, which calls intern only when it misses.
func (s *Stacks) cached(st trace.Stack) (StackID, bool) {
	slot := &s.recent[stackHint(st)&(uint64(len(s.recent))-1)]
	return slot.id, slot.st == st
}

// intern returns the StackID of st, copying its frames the first time.
func (s *Stacks) intern(st trace.Stack) StackID {
	if st == trace.NoStack {
		return NoStack
	}
	slot := &s.recent[stackHint(st)&(uint64(len(s.recent))-1)]
	if slot.st == st {
		return slot.id
	}
	if id, ok := s.gen[st]; ok {
		*slot = recentStack{st, id}
		return id
	}
	var fr []Frame
	s.key.Reset()
	for f := range st.Frames() {
		fr = append(fr, Frame{Func: f.Func, File: f.File, Line: f.Line})
		s.key.WriteString(f.Func)
		s.key.WriteByte(':')
		s.key.WriteString(strconv.FormatUint(f.Line, 10))
		s.key.WriteByte(';')
	}
	k := s.key.String()
	id, ok := s.byKey[k]
	if !ok {
		id = StackID(len(s.frames))
		s.frames = append(s.frames, fr)
		s.byKey[k] = id
	}
	s.gen[st] = id
	*slot = recentStack{st, id}
	return id
}

// Resolve interns the stacks of records from Convert, which must be
// passed in the order they were read, each exactly once, and returns how many
// it resolved: all of them unless a record's stack cannot be read (a damaged
// trace's stack or string table), when err is an *Error with an unknown
// offset and the records from that one on must not be used, nor Resolve
// called again.
func (s *Stacks) Resolve(recs []Event) (n int, err error) {
	var i int
	defer func() {
		if p := recover(); p != nil { // the trace's tables are read only here, lazily
			n, err = i, panicError(s.name, -1, p)
		}
	}()
	for i = range recs {
		ev := &recs[i]
		if ev.Kind == KindSync {
			s.newGeneration()
		}
		if ev.raw != trace.NoStack {
			id, ok := s.cached(ev.raw)
			if !ok {
				id = s.intern(ev.raw)
			}
			ev.Stack, ev.raw = id, trace.NoStack
		}
		if ev.rawActor != trace.NoStack {
			id, ok := s.cached(ev.rawActor)
			if !ok {
				id = s.intern(ev.rawActor)
			}
			ev.ActorStack, ev.rawActor = id, trace.NoStack
		}
	}
	return len(recs), nil
}
