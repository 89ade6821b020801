package critpath

import (
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// TermID identifies a term in the analyser's term table: a wait, or the CPU
// of an application frame (Seg.CPU). NoTerm marks running and runnable
// time in Seg.Term.
type TermID int32

// NoTerm is the TermID of segments that are not waits.
const NoTerm TermID = -1

// CPUFrom says how the CPU term of a running segment was decided
// (docs/method.md §3, "CPU by frame").
type CPUFrom uint8

// Sources of a running segment's frame.
const (
	CPUNone    CPUFrom = iota // no frame: plain running time
	CPUSamples                // the CPU samples taken in running time of the same code
	CPUStacks                 // the stacks where the goroutine resumed and stopped (an estimate)
)

// Seg is one interval of one goroutine's time inside a request.
type Seg struct {
	Start, End tracein.Time
	Kind       frame.Kind
	Term       TermID // for waits and syscalls; NoTerm otherwise
	// CPU, for running time given an application frame, is the CPU term of
	// that frame; From says how it was decided, and CPU is meaningful only
	// when From is not CPUNone (the zero value: a plain running segment).
	CPU  TermID
	From CPUFrom
	// Stack is the blocking stack of a wait or syscall (NoStack otherwise).
	Stack tracein.StackID
	// Waker is the index (in Request.Gs) of the request goroutine whose
	// action ended this wait, or -1.
	Waker int32
	// Borrow is the index (in Request.Borrows) of the timeline of a goroutine
	// outside the request that ended this wait (a transport goroutine, a
	// worker), or -1.
	Borrow int32
	// Contention is set when a goroutine of another request ended the wait.
	Contention bool
	// JoinAll is set for a wait that joins every goroutine its goroutine
	// started (sync.WaitGroup.Wait, errgroup.Group.Wait): the trace records
	// only the last goroutine's wake-up, but in a simulation the wait also
	// lasts until the others are done.
	JoinAll bool
	// along is the CPU term whose CPU this plain running or runnable piece
	// stretched, plus one (0, the zero value: none); see Along.
	along int32
}

// Along returns the CPU term this plain running or runnable piece goes
// along with, or NoTerm (docs/method.md §3, "CPU by frame"): running time
// Go counted while no CPU sample saw the thread run (time the kernel gave
// another thread, on a busy host), shared among the terms the same
// context's samples saw, in proportion to their samples; and runnable time
// between two running intervals of the term, after a preemption (or a
// yield) in its frame. The budget keeps it plain running or runnable; a
// what-if on the term scales it too, since it stretches with the CPU it
// waited beside.
func (s *Seg) Along() TermID { return TermID(s.along - 1) }

// SetAlong sets the term Along returns.
func (s *Seg) SetAlong(t TermID) { s.along = int32(t) + 1 }

// SimSubject returns the term a what-if's simulation acts on for this
// segment: Subject, or else the term it goes along with (Along).
func (s *Seg) SimSubject() TermID {
	if t := s.Subject(); t != NoTerm {
		return t
	}
	return s.Along()
}

// Dur returns the segment's length in nanoseconds.
func (s *Seg) Dur() int64 { return int64(s.End - s.Start) }

// Subject returns the term a what-if acts on for this segment: its wait's
// term, or the CPU term of the frame it ran in; NoTerm for neither.
func (s *Seg) Subject() TermID {
	if s.Term == NoTerm && s.From != CPUNone {
		return s.CPU
	}
	return s.Term
}

// IsJoin reports whether the wait was ended by another goroutine of the
// same request (a join, a channel handoff, a mutex passed within the request).
func (s *Seg) IsJoin() bool { return s.Waker >= 0 }

// G is one goroutine's timeline inside a request: its segments in time order.
type G struct {
	ID tracein.GoID
	// Creator is the index of the request goroutine that created this one,
	// or -1 (the task's goroutine, or one that joined through a region).
	Creator int32
	// Committed is false for goroutines created in the request that were
	// still alive when it ended (connection pools and other long-lived
	// goroutines): their time is not the request's, but their timeline may
	// still explain a wait of the request (as a borrowed timeline).
	Committed bool
	Start     tracein.Time
	Segs      []Seg
}

// Borrowed is a copy of the recent timeline of a goroutine outside the
// request, taken when it woke a request goroutine.
type Borrowed struct {
	ID tracein.GoID
	// Segs: Waker indexes refer to Request.Gs. A wait of this goroutine
	// ended by another goroutine outside the request has Borrow set to that
	// goroutine's timeline in turn (a hand-off behind a hand-off: an apply
	// queue behind a raft loop), at most MaxHops deep; Stack is the
	// goroutine's own blocking stack, so the root cause can be named.
	Segs []Seg
}

// MaxHops bounds the chain of goroutines outside a request that the walk
// follows to explain one of its waits (docs/method.md §4): the goroutine
// that ended the wait, the one that ended that goroutine's wait, and so on.
// A pipelined server's stages are a few hand-offs long (etcd: the request's
// wait registry ← apply ← raft's WAL sync); four leaves a margin and keeps
// the copies small.
const MaxHops = 4

// Request is one request's goroutines between Begin and End.
type Request struct {
	Begin, End tracein.Time
	EndG       int32 // index of the goroutine that ended the request
	Gs         []G
	Borrows    []Borrowed
}

// Latency returns End − Begin in nanoseconds.
func (r *Request) Latency() int64 { return int64(r.End - r.Begin) }

// segAt returns the index of the segment of segs with Start < t ≤ End, or -1.
func segAt(segs []Seg, t tracein.Time) int {
	if lo := firstEnd(segs, t); lo < len(segs) && segs[lo].Start < t {
		return lo
	}
	return -1
}

// firstEnd returns the index of the first segment of segs with End >= t
// (len(segs) when none).
func firstEnd(segs []Seg, t tracein.Time) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := (lo + hi) / 2
		if segs[m].End < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// endedByMember reports whether seg, a segment of goroutine g, is a wait
// another committed goroutine of the request ended: a simulation ends it
// at that goroutine's simulated point, not after its recorded length.
func (r *Request) endedByMember(g int32, seg *Seg) bool {
	w := seg.Waker
	return w >= 0 && w != g && r.Gs[w].Committed
}

// segAtFrom is segAt for a walk that moves back in time along segs: *at
// is the index the previous call found (or any index), and the answer is
// looked for there and just before it first, without a binary search
// when it is one of them; *at is set to the answer.
func segAtFrom(segs []Seg, t tracein.Time, at *int32) int {
	// lo is firstEnd's answer: a candidate j is it when segs[j].End >= t
	// and segs[j-1].End < t (the segments' ends grow).
	j, n := int(*at), len(segs)
	var lo int
	switch {
	case j < n && segs[j].End >= t && (j == 0 || segs[j-1].End < t):
		lo = j
	case j >= 1 && j <= n && segs[j-1].End >= t && (j == 1 || segs[j-2].End < t):
		lo = j - 1
	default:
		lo = firstEnd(segs, t)
	}
	*at = int32(lo)
	if lo < len(segs) && segs[lo].Start < t {
		return lo
	}
	return -1
}

// Scratch is the working memory of Walk and Simulate, kept for reuse across
// requests so that an analysis of millions of requests does not allocate
// per request. The zero value is ready to use; a Scratch belongs to one
// goroutine at a time.
type Scratch struct {
	path  []PathSeg
	stack []walkFrame
	at    []int32 // Walk's hints by request goroutine (segAtFrom)
	gs    []simG
}
