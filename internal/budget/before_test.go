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
					g.push(h)
				}
			}
			g := a.g(conn)
			g.lastEnd = c.lastEnd
			if got := a.runnableBefore(g); got != c.want {
				t.Errorf("runnableBefore = %d, want %d", got, c.want)
			}
		})
	}
}
