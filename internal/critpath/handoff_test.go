package critpath

import (
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// chain builds a request whose one wait (term 3, 0–10 ms) was ended by a
// goroutine of no request (id 100) that waited on a FIFO (chan receive)
// ended by the next (id 101), and so on for n goroutines; the last was in
// a syscall (stack 77) for the wait's last 8 ms, and ran for 1 ms before
// waking the one before it.
func chain(n int) *Request {
	r := &Request{End: 10 * ms, Gs: []G{{ID: 1, Creator: -1, Committed: true, Segs: []Seg{
		{Start: 0, End: 10 * ms, Kind: frame.ChanRecv, Term: 3, Stack: 5, Waker: -1, Borrow: 0},
	}}}}
	for i := 0; i < n; i++ {
		b := Borrowed{ID: tracein.GoID(100 + i)}
		if i < n-1 { // waiting on the next goroutine, then running 1 ms
			b.Segs = []Seg{
				{Start: 0, End: 9 * ms, Kind: frame.ChanRecv, Term: NoTerm, Stack: tracein.StackID(60 + i), Waker: -1, Borrow: int32(i + 1)},
				{Start: 9 * ms, End: 10 * ms, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1},
			}
		} else {
			b.Segs = []Seg{
				{Start: 0, End: 1 * ms, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1},
				{Start: 1 * ms, End: 9 * ms, Kind: frame.Syscall, Term: NoTerm, Stack: 77, Waker: -1, Borrow: -1},
				{Start: 9 * ms, End: 10 * ms, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1},
			}
		}
		r.Borrows = append(r.Borrows, b)
	}
	return r
}

// TestWalkThroughHandOffs: the walk follows a borrowed goroutine's wait to
// the goroutine that ended it, and on (issue #36: an apply queue behind a
// raft loop's fdatasync), every piece under the request's term, with the
// goroutines it went through and the stack it ends in; at most MaxHops
// goroutines from the request.
func TestWalkThroughHandOffs(t *testing.T) {
	for _, n := range []int{1, 2, 3, MaxHops, MaxHops + 2} {
		r := chain(n)
		path := Walk(r)
		if sum(path) != r.Latency() {
			t.Fatalf("n=%d: path sums to %d, want %d", n, sum(path), r.Latency())
		}
		var syscall, other int64
		for _, p := range path {
			if p.Term != 3 || !p.Borrowed {
				t.Errorf("n=%d: piece %+v: want every piece borrowed under term 3", n, p)
			}
			if p.Kind == frame.Syscall {
				syscall += p.Dur()
				if p.Cause != 77 || p.G != tracein.GoID(100+n-1) || int(p.Hops) != n-1 {
					t.Errorf("n=%d: the syscall piece: cause %d on G%d after %d hops, want stack 77 on G%d after %d", n, p.Cause, p.G, p.Hops, 100+n-1, n-1)
				}
				for i := 0; i < int(p.Hops); i++ {
					if p.Via[i] != (Hop{G: tracein.GoID(100 + i), Kind: frame.ChanRecv}) {
						t.Errorf("n=%d: hop %d is %+v, want G%d chan receive", n, i, p.Via[i], 100+i)
					}
				}
			} else if p.Kind == frame.ChanRecv {
				other += p.Dur()
			}
		}
		switch {
		case n <= MaxHops && syscall != int64(8*ms):
			t.Errorf("n=%d: %d ns of syscall on the path, want 8 ms", n, syscall)
		case n > MaxHops && (syscall != 0 || other == 0):
			t.Errorf("n=%d: beyond %d goroutines the walk stops at the last one's own wait (chan receive %d ns, syscall %d ns)", n, MaxHops, other, syscall)
		}
	}
}
