package dbhost

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// point is a backend's run-queue wait counter as sampled at a time.
type point struct {
	at   int64 // Unix ns
	wait time.Duration
}

// Waits is a recording: per backend, its counter over time, and the span
// of time the recorder ran.
type Waits struct {
	// Period is the recorder's sampling period.
	Period time.Duration
	// From and To are the first and last lines' times: the recording
	// covers them.
	From, To time.Time
	byPID    map[int][]point
	// late are the passes that came more than 1.5 periods after the
	// previous one, with that gap (PID-0 lines with a gap).
	late []point
}

// Backends is the number of backends recorded.
func (w *Waits) Backends() int { return len(w.byPID) }

// Read parses a recording; name is for errors ("FILE:LINE: …").
func Read(name string, r io.Reader) (*Waits, error) {
	return ReadContext(context.Background(), name, r)
}

// ReadContext is Read, stopped when ctx is done: every read of r checks it
// first, and a read error ends the recording there, the line it cut off
// unparsed.
func ReadContext(ctx context.Context, name string, r io.Reader) (*Waits, error) {
	return ReadWindow(ctx, name, r, time.Time{}, time.Time{})
}

// ReadWindow is ReadContext keeping only what In and Cover need for
// windows within [from, to] (a zero time: no bound): of each backend, its
// last line before from, its lines in between and its first line after
// to. Memory is then bounded by the window, not by the recording's
// length; From, To and Backends still describe the whole recording.
func ReadWindow(ctx context.Context, name string, r io.Reader, from, to time.Time) (*Waits, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.UnixNano()
	}
	if !to.IsZero() {
		hi = to.UnixNano()
	}
	lr := &lastByte{r: r, ctx: ctx}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), 4096)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: empty: not a latscope dbhost recording", name)
	}
	w := &Waits{byPID: map[int][]point{}}
	head := sc.Text()
	rest, ok := strings.CutPrefix(head, Header+" period_ns=")
	if !ok {
		return nil, fmt.Errorf("%s:1: %q is not a latscope dbhost recording's first line (%q)", name, clip(head), Header+" period_ns=N")
	}
	p, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || p <= 0 {
		return nil, fmt.Errorf("%s:1: period_ns %q: want a positive number of nanoseconds", name, clip(rest))
	}
	w.Period = time.Duration(p)
	var first, last int64
	lines := 1
	for line := 2; sc.Scan(); line++ {
		if lr.err != nil && lr.err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", name, line, lr.err)
		}
		lines = line
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 3 (UNIX_NS PID RUN_DELAY_NS)", name, line, len(f))
		}
		var v [3]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil || v[i] < 0 {
				return nil, fmt.Errorf("%s:%d: field %d %q: want a non-negative integer", name, line, i+1, clip(f[i]))
			}
		}
		if v[0] < last {
			return nil, fmt.Errorf("%s:%d: time %d is before the line above's %d (the lines are in time order)", name, line, v[0], last)
		}
		if first == 0 {
			first = v[0]
		}
		last = v[0]
		pt := point{v[0], time.Duration(v[2])}
		switch pid := int(v[1]); {
		case pid == 0 && v[2] > 0 && v[0] >= lo && (v[0] <= hi || len(w.late) == 0 || w.late[len(w.late)-1].at <= hi):
			w.late = append(w.late, pt)
		case pid == 0:
		case v[0] < lo: // only the last before the window counts
			w.byPID[pid] = append(w.byPID[pid][:0], pt)
		case v[0] <= hi:
			w.byPID[pid] = append(w.byPID[pid], pt)
		default: // only the first after it
			if pts := w.byPID[pid]; len(pts) == 0 || pts[len(pts)-1].at <= hi {
				w.byPID[pid] = append(pts, pt)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if lr.last != '\n' {
		return nil, fmt.Errorf("%s:%d: the last line is cut off (no newline at the end): the recording did not end cleanly", name, lines)
	}
	if first == 0 {
		return nil, fmt.Errorf("%s: no samples after the first line", name)
	}
	w.From, w.To = time.Unix(0, first), time.Unix(0, last)
	return w, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// In returns how long backend pid waited on the run queue in the window
// [from, to], to within one period on either side: the increase of its
// counter between its value at from and its value at the recorder's
// first pass after to (a wait ending at to is written then): one period
// after to, or later when that pass was late. ok is false when the
// recording does not cover the window or had not yet seen pid at from
// (Cover says which).
func (w *Waits) In(pid int, from, to time.Time) (wait time.Duration, ok bool) {
	wait, miss := w.Cover(pid, from, to)
	return wait, miss == Covered
}

// Miss is why a recording has no answer for a backend's window.
type Miss uint8

// Misses, in the order Cover checks them.
const (
	Covered     Miss = iota // it has the answer
	EmptyWindow             // the window ends before it begins
	OutsideTime             // the window (and the pass after it) is not within the recording's time
	NoBackend               // the recording has no line of the PID
	SeenLate                // the recording first saw the PID after the window began
	WentBack                // the PID's counter went back in the window: another process took the PID
)

// Cover is In, with the reason when there is no answer.
func (w *Waits) Cover(pid int, from, to time.Time) (wait time.Duration, miss Miss) {
	pts := w.byPID[pid]
	end := w.nextPass(to)
	switch {
	case to.Before(from):
		return 0, EmptyWindow
	case from.Before(w.From) || end.After(w.To):
		return 0, OutsideTime
	case len(pts) == 0:
		return 0, NoBackend
	}
	a, okA := valueAt(pts, from.UnixNano())
	b, _ := valueAt(pts, end.UnixNano())
	switch {
	case !okA:
		return 0, SeenLate
	case b < a: // a counter going back: another process took the PID
		return 0, WentBack
	}
	return b - a, Covered
}

// lastByte passes r through, until ctx is done, and remembers the last
// byte read and the error.
type lastByte struct {
	r    io.Reader
	ctx  context.Context
	last byte
	err  error
}

func (l *lastByte) Read(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		l.err = err
		return 0, err
	}
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	l.err = err
	return n, err
}

// nextPass is when the recorder's first pass after t was: one period
// after t, unless a late pass came after a gap that began at or before t.
func (w *Waits) nextPass(t time.Time) time.Time {
	ns := t.UnixNano()
	i := sort.Search(len(w.late), func(i int) bool { return w.late[i].at > ns })
	if i < len(w.late) && w.late[i].at-int64(w.late[i].wait) <= ns {
		return time.Unix(0, w.late[i].at)
	}
	return t.Add(w.Period)
}

// valueAt is the counter's last sampled value at or before t.
func valueAt(pts []point, t int64) (time.Duration, bool) {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].at > t }) - 1
	if i < 0 {
		return 0, false
	}
	return pts[i].wait, true
}
