package tracein

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/exp/trace"
)

// Reader reads records from a Go execution trace.
type Reader struct {
	name   string
	cr     *countingReader
	tr     *trace.Reader
	stacks *Stacks
	events int64
	conv   Converter // Fill's
}

// NewReader starts reading a trace from r; name is used in error messages
// (usually the file name). Errors are *Error.
func NewReader(name string, r io.Reader) (rd *Reader, err error) {
	cr := &countingReader{r: bufio.NewReaderSize(r, 1<<20)}
	defer func() {
		if p := recover(); p != nil { // the parser must never take the process down
			rd, err = nil, panicError(name, cr.n, p)
		}
	}()
	head, _ := cr.r.Peek(16)
	head = append([]byte(nil), head...)
	tr, err := trace.NewReader(cr)
	if err != nil {
		if e := readError(name, cr.n, cr.err); e != nil {
			return nil, e
		}
		if cr.n == 0 {
			return nil, &Error{Name: name, Offset: -1, Msg: "empty file, not a Go execution trace"}
		}
		if v, ok := headerVersion(head); ok { // a trace, damaged or of a version this reader lacks
			msg := "bad Go " + v + " trace"
			if isOldFormat(v) {
				msg += " (the Go 1.11–1.21 format is parsed whole before its first event: this one cannot be analysed even in part)"
			}
			return nil, newError(name, cr.n, msg, err)
		}
		return nil, newError(name, cr.n, "not a Go execution trace", err)
	}
	return &Reader{name: name, cr: cr, tr: tr, stacks: &Stacks{name: name, frames: [][]Frame{nil}, byKey: map[string]StackID{}, gen: map[trace.Stack]StackID{}}}, nil
}

// isOldFormat reports whether a version ("1.21") writes the trace format
// that x/exp/trace converts in memory, whole, before its first event.
func isOldFormat(v string) bool {
	minor, err := strconv.Atoi(strings.TrimPrefix(v, "1."))
	return err == nil && minor < 22
}

// headerVersion returns the version in a trace header, "go 1.N trace".
func headerVersion(head []byte) (string, bool) {
	v, ok := strings.CutPrefix(string(head), "go 1.")
	if !ok {
		return "", false
	}
	minor, ok := strings.CutSuffix(strings.TrimRight(v, "\x00"), " trace")
	if !ok || minor == "" || strings.Trim(minor, "0123456789") != "" {
		return "", false
	}
	return "1." + minor, true
}

// Stacks returns the table that the StackIDs of this reader's events index.
func (r *Reader) Stacks() *Stacks { return r.stacks }

// Offset returns how many bytes of input have been consumed.
func (r *Reader) Offset() int64 { return r.cr.n }

// Events returns how many trace events have been read.
func (r *Reader) Events() int64 { return r.events }

// Next returns the next record, or io.EOF at the end of the trace. Trace
// events an analysis does not need are skipped. Errors name the input and
// offset; after an error the Reader must not be used again.
func (r *Reader) Next() (ev Event, err error) {
	var one [1]Event
	if _, err := r.Fill(one[:]); err != nil {
		return Event{}, err
	}
	return one[0], nil
}

// Fill reads records into recs until it is full and returns how many it
// read. When it returns fewer, err says why: io.EOF at the end of the trace,
// or an error naming the input and offset, after which the Reader must not
// be used again. It is Next for many records at once, without copying each.
func (r *Reader) Fill(recs []Event) (n int, err error) {
	n, err = r.fill(recs)
	if m, rerr := r.stacks.Resolve(recs[:n]); rerr != nil { // a damaged stack table: stop at its first use
		rerr.(*Error).Offset = r.cr.n
		return m, rerr
	}
	return n, err
}

// fill is Fill without interning the records' stacks.
func (r *Reader) fill(recs []Event) (n int, err error) {
	defer r.recovered(&err)
	for n < len(recs) {
		ev, err := r.read()
		if err != nil {
			return n, err
		}
		n += convert(unsafe.Slice(&ev, 1), recs[n:n+1], &r.conv.kinds, &r.conv.tc)
	}
	return n, nil
}

// ReadRaw reads the trace's next events, undecoded, into evs until it is
// full and returns how many it read; err is as for Fill. With Convert and
// Stacks.Resolve it splits Fill in three, so that one goroutine can decode
// the trace while another converts and analyses: ReadRaw's calls must be in
// order on one goroutine; Resolve's, in the same order, on one goroutine
// (the stack table's only writer); Convert may run anywhere in between.
func (r *Reader) ReadRaw(evs []trace.Event) (n int, err error) {
	defer r.recovered(&err)
	for n < len(evs) {
		// Straight into the batch: an event is 80 bytes, and a copy
		// through read cost more than the rest of this loop.
		evs[n], err = r.tr.ReadEvent()
		if err != nil {
			evs[n] = trace.Event{}
			return n, r.readErr(err)
		}
		r.events++
		n++
	}
	return n, nil
}

// read returns the next trace event; errors are as for Fill.
func (r *Reader) read() (trace.Event, error) {
	ev, err := r.tr.ReadEvent()
	if err != nil {
		return ev, r.readErr(err)
	}
	r.events++
	return ev, nil
}

// readErr returns the error to report for err from the trace parser:
// io.EOF as it is, others wrapped.
func (r *Reader) readErr(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return r.wrap(err)
}

// recovered, deferred, turns a parser panic into an error naming the input
// and offset: the parser must never take the process down.
func (r *Reader) recovered(err *error) {
	if p := recover(); p != nil {
		*err = panicError(r.name, r.cr.n, p)
	}
}

// Converter turns events from ReadRaw into records, as Fill does but with
// their stacks still to be resolved, in order, by Stacks.Resolve. It keeps
// what it learns of the trace's event types from one call to the next, so
// each goroutine that converts has its own; the zero value is ready.
type Converter struct {
	kinds kindCache
	tc    transitions
}

// Convert converts evs into recs, which must be at least as long, and
// returns how many records it wrote. name is used in errors.
func (c *Converter) Convert(name string, evs []trace.Event, recs []Event) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(name, -1, p)
		}
	}()
	return convert(evs, recs[:len(evs)], &c.kinds, &c.tc), nil
}

// wrap turns an error of the trace parser into an *Error.
func (r *Reader) wrap(err error) error {
	if e := readError(r.name, r.cr.n, r.cr.err); e != nil {
		return e
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return newError(r.name, r.cr.n, "trace is truncated", err)
	}
	return newError(r.name, r.cr.n, "bad trace data", err)
}

// convert copies out the fields of the events that analyses use into
// recs, skipping those no analysis needs, and returns how many it wrote
// (recs must be as long as evs); kinds and tc are the caller's, for head
// and the transitions' recipes. The work per event is in the loop: a call
// per event cost more than the rest of the loop for most events.
func convert(evs []trace.Event, recs []Event, kinds *kindCache, tc *transitions) (n int) {
	for i := range evs {
		ev, out := &evs[i], &recs[n]
		var (
			t    trace.Time
			g    trace.GoID
			m    trace.ThreadID
			p    trace.ProcID
			kind trace.EventKind
			h    *eventHead
		)
		if headOK { // head, written out
			h = (*eventHead)(unsafe.Pointer(ev))
			t, g, m, p, kind = trace.Time(h.time), trace.GoID(h.g), trace.ThreadID(h.m), trace.ProcID(h.p), kinds.of(h.typ, ev)
		} else {
			t, g, m, p, kind = headByMethods(ev)
		}
		*out = Event{Time: Time(t), G: GoID(g), Thread: int64(m), Proc: int64(p)}
		switch kind {
		case trace.EventSync:
			out.Kind = KindSync
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				out.Wall = cs.Wall.Add(t.Sub(cs.Trace))
			}
		case trace.EventStateTransition: // most events
			var rc *recipe
			if h != nil && !tc.off {
				if rc = &recipes[h.typ]; rc.kind == 0 {
					rc = nil
				} else if tc.checked[h.typ] >= checks {
					tc.fast(rc, ev, h, out)
					break
				}
			}
			base := *out
			kept := transition(ev, out)
			if rc != nil {
				tc.check(rc, ev, h, base, out, kept)
			}
			if !kept {
				continue
			}
		case trace.EventTaskBegin, trace.EventTaskEnd:
			t := ev.Task()
			out.Kind = KindTaskBegin
			if kind == trace.EventTaskEnd {
				out.Kind = KindTaskEnd
			}
			out.Task, out.Parent, out.Name = TaskID(t.ID), TaskID(t.Parent), t.Type
			out.raw = ev.Stack()
		case trace.EventRegionBegin, trace.EventRegionEnd:
			rg := ev.Region()
			out.Kind = KindRegionBegin
			if kind == trace.EventRegionEnd {
				out.Kind = KindRegionEnd
			}
			out.Task, out.Name = TaskID(rg.Task), rg.Type
			out.raw = ev.Stack()
		case trace.EventLog:
			lg := ev.Log()
			out.Kind, out.Task, out.Name, out.Message = KindLog, TaskID(lg.Task), lg.Category, lg.Message
			out.raw = ev.Stack()
		case trace.EventStackSample:
			out.Kind, out.raw = KindSample, ev.Stack()
		default:
			continue
		}
		n++
	}
	return n
}

// transition writes state transition ev into out through its method and
// reports whether the record is kept (a goroutine's transition, or a
// proc's that changes whether it executes).
func transition(ev *trace.Event, out *Event) bool {
	st := ev.StateTransition()
	switch st.Resource.Kind {
	case trace.ResourceGoroutine:
		from, to := st.Goroutine()
		out.Kind = KindGoState
		out.Actor = out.G
		out.G = GoID(st.Resource.Goroutine())
		out.From, out.To = State(from), State(to)
		out.Reason = st.Reason
		out.raw = st.Stack
		if out.Actor != NoGoroutine && out.Actor != out.G {
			out.rawActor = ev.Stack()
		}
	case trace.ResourceProc:
		from, to := st.Proc()
		if from == to {
			return false
		}
		out.Kind = KindProcState
		out.Proc = int64(st.Resource.Proc())
		out.From, out.To = procState(from), procState(to)
	default:
		return false
	}
	return true
}

func procState(s trace.ProcState) State {
	if s.Executing() {
		return Running
	}
	return NotExist
}

// countingReader counts the bytes read and keeps the input's first error
// other than io.EOF (a read error, not bad data).
type countingReader struct {
	r   *bufio.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.keep(err)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	c.keep(err)
	return b, err
}

func (c *countingReader) keep(err error) {
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
}
