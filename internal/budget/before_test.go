package budget

import (
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// TestRunnableBefore: the runnable time that led a goroutine to begin a
// request, read back from the intervals goroutines remember — net/http's
// shape: the connection's goroutine waits on a sync.Cond that its
// connection reader ends after the reader, woken by the network, waited
// for a CPU; back to the reader's network wait, never before the
// goroutine's previous request ended, at most beforeHops hand-offs.
func TestRunnableBefore(t *testing.T) {
	const conn, reader, third tracein.GoID = 1, 2, 3
	const none = tracein.NoGoroutine
	cases := []struct {
		name    string
		lastEnd tracein.Time
		creator tracein.GoID // conn's creator (the accept loop), or none
		conn    []hseg
		reader  []hseg
		third   []hseg
		want    int64
	}{
		{name: "own runnable only, back to a network wait",
			conn: []hseg{{0, 100, frame.Network, none, 0}, {100, 130, frame.Runnable, none, 0}, {130, 140, frame.Running, none, 0},
				{140, 141, frame.Syscall, none, 0}, {141, 150, frame.Running, none, 0}},
			want: 30},
		{name: "through the reader's hand-off",
			conn: []hseg{{0, 200, frame.Cond, reader, 0}, {200, 205, frame.Runnable, none, 0}, {205, 210, frame.Running, none, 0}},
			reader: []hseg{{0, 120, frame.Network, none, 0}, {120, 190, frame.Runnable, none, 0}, {190, 250, frame.Running, none, 0},
				{250, 400, frame.Network, none, 0}}, // after it woke conn: not counted
			want: 5 + 70},
		{name: "never before the previous request's end",
			lastEnd: 150,
			conn:    []hseg{{0, 200, frame.Cond, reader, 0}, {200, 205, frame.Runnable, none, 0}},
			reader:  []hseg{{0, 120, frame.Network, none, 0}, {120, 190, frame.Runnable, none, 0}, {190, 200, frame.Running, none, 0}},
			want:    5 + 40},
		{name: "a wait no one handed over ends the walk",
			conn: []hseg{{0, 50, frame.Runnable, none, 0}, {50, 100, frame.Sleep, none, 0}, {100, 110, frame.Runnable, none, 0}},
			want: 10},
		{name: "back to the creation, into the creator (a new connection's accept loop)",
			creator: reader, // the accept loop here
			conn:    []hseg{{100, 130, frame.Runnable, none, 0}, {130, 140, frame.Running, none, 0}},
			reader:  []hseg{{0, 80, frame.Network, none, 0}, {80, 95, frame.Runnable, none, 0}, {95, 150, frame.Running, none, 0}},
			want:    30 + 15},
		{name: "a goroutine from before the trace has no creator to follow",
			creator: none,
			conn:    []hseg{{100, 130, frame.Runnable, none, 0}, {130, 140, frame.Running, none, 0}},
			reader:  []hseg{{0, 80, frame.Network, none, 0}, {80, 95, frame.Runnable, none, 0}},
			want:    30},
		{name: "at most beforeHops hand-offs",
			conn:   []hseg{{0, 300, frame.ChanRecv, reader, 0}, {300, 301, frame.Runnable, none, 0}},
			reader: []hseg{{0, 200, frame.Sync, third, 0}, {200, 210, frame.Runnable, none, 0}, {210, 300, frame.Running, none, 0}},
			third:  []hseg{{0, 100, frame.ChanSend, 4, 0}, {100, 150, frame.Runnable, none, 0}, {150, 200, frame.Running, none, 0}},
			want:   1 + 10 + 50},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := New(Options{}, nil)
			for id, segs := range map[tracein.GoID][]hseg{conn: c.conn, reader: c.reader, third: c.third} {
				g := a.g(id)
				for _, h := range segs {
					pushSeg(g, h)
				}
			}
			g := a.g(conn)
			g.lastEnd, g.creator = c.lastEnd, c.creator
			if c.creator == 0 { // not given: a goroutine from before the trace
				g.creator = none
			}
			if got := a.runnableBefore(g); got != c.want {
				t.Errorf("runnableBefore = %d, want %d", got, c.want)
			}
		})
	}
}

// TestRunnableBeforeNotTheWakersRequest: a goroutine that waited for a
// limiter's slot before it began its request was handed the slot by
// another request's goroutine as that request ended; the waker's runnable
// time inside its own request is that request's, not this one's wait.
// Found on a traced GOMAXPROCS 1 service with a 2-slot limiter before the
// task: 3.39 ms per request measured where the goroutines outside any
// request were runnable 2.33 ms per request in all.
func TestRunnableBeforeNotTheWakersRequest(t *testing.T) {
	const conn, other tracein.GoID = 1, 2
	const none = tracein.NoGoroutine
	for _, c := range []struct {
		name     string
		otherEnd tracein.Time // when the waker left its request
		joined   tracein.Time // the waker is inside a request it joined then (0: none)
		want     int64
	}{
		{name: "the waker's request ended at 150, just before it handed over", otherEnd: 150, want: 5},
		{name: "the waker's request ended at 30", otherEnd: 30, want: 5 + 20 + 10},
		{name: "the waker was in a request as it handed over", joined: 60, want: 5},
		{name: "the waker joined a request after it handed over", joined: 250, want: 5 + 20 + 30},
		{name: "the waker in no request", want: 5 + 20 + 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := New(Options{}, nil)
			g := a.g(conn)
			for _, h := range []hseg{{0, 200, frame.ChanSend, other, 0}, {200, 205, frame.Runnable, none, 0}} {
				pushSeg(g, h)
			}
			w := a.g(other)
			for _, h := range []hseg{{0, 10, frame.Sleep, none, 0}, {10, 40, frame.Runnable, none, 0}, {40, 100, frame.Running, none, 0},
				{100, 120, frame.Runnable, none, 0}, {120, 210, frame.Running, none, 0}} {
				pushSeg(w, h)
			}
			w.lastEnd = c.otherEnd
			if c.joined > 0 {
				w.req, w.joined = &reqState{}, c.joined
			}
			if got := a.runnableBefore(g); got != c.want {
				t.Errorf("runnableBefore = %d, want %d", got, c.want)
			}
		})
	}
}

// pushSeg remembers h as g's closed interval, as the analyser does when g
// leaves the state h is of.
func pushSeg(g *gstate, h hseg) {
	kind, stack := g.kind, g.stack
	g.kind, g.stack = h.kind, h.stack
	g.push(h.start, h.end, h.waker)
	g.kind, g.stack = kind, stack
}
