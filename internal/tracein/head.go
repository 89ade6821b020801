package tracein

import (
	"reflect"
	"unsafe"

	"golang.org/x/exp/trace"
)

// Reading an x/exp/trace Event's time and execution context through its
// methods copies the whole 80-byte event at each call, even inlined (the
// methods take the event by value), and conversion asks five of them per
// event. head reads them in place instead, through eventHead, a mirror of
// the event's leading fields; headOK says that the mirror matches the
// Event of the x/exp/trace this was built with (checked by reflection at
// start-up), and where it does not, the methods are used.

// eventHead mirrors the leading fields of trace.Event: its table, its
// execution context (schedCtx: G, P, M) and its base event's type, time
// and arguments.
type eventHead struct {
	table   unsafe.Pointer
	g, p, m int64
	typ     uint8
	time    int64
	args    [4]uint64
}

// headOK reports whether eventHead matches trace.Event's layout.
var headOK = headMatches(reflect.TypeFor[trace.Event]())

// headMatches reports whether the fields eventHead reads are where it reads
// them in t, with the same kinds.
func headMatches(t reflect.Type) bool {
	type want struct {
		path []string
		off  uintptr
		kind reflect.Kind
	}
	var h eventHead
	for _, w := range []want{
		{[]string{"table"}, unsafe.Offsetof(h.table), reflect.Pointer},
		{[]string{"ctx", "G"}, unsafe.Offsetof(h.g), reflect.Int64},
		{[]string{"ctx", "P"}, unsafe.Offsetof(h.p), reflect.Int64},
		{[]string{"ctx", "M"}, unsafe.Offsetof(h.m), reflect.Int64},
		{[]string{"base", "typ"}, unsafe.Offsetof(h.typ), reflect.Uint8},
		{[]string{"base", "time"}, unsafe.Offsetof(h.time), reflect.Int64},
		{[]string{"base", "args"}, unsafe.Offsetof(h.args), reflect.Array},
	} {
		ft, off := t, uintptr(0)
		for _, name := range w.path {
			if ft.Kind() != reflect.Struct {
				return false
			}
			f, ok := ft.FieldByName(name)
			if !ok || len(f.Index) != 1 {
				return false
			}
			ft, off = f.Type, off+f.Offset
		}
		if off != w.off || ft.Kind() != w.kind {
			return false
		}
		if ft.Kind() == reflect.Array && (ft.Elem().Kind() != reflect.Uint64 || ft.Len() < len(h.args)) {
			return false
		}
	}
	return t.Size() >= unsafe.Sizeof(h)
}

// kindCache remembers the Kind of each of the trace's event types met
// (Kind is a function of the type alone), so that it costs no call and no
// copy of the event: 0 is unknown, else the Kind plus one.
type kindCache [256]uint16

// of returns the Kind of ev, whose type is typ (small enough to be
// inlined).
func (c *kindCache) of(typ uint8, ev *trace.Event) trace.EventKind {
	if k := c[typ]; k != 0 {
		return trace.EventKind(k - 1)
	}
	return c.learn(typ, ev)
}

// learn is of for a type not met before.
func (c *kindCache) learn(typ uint8, ev *trace.Event) trace.EventKind {
	k := ev.Kind()
	c[typ] = uint16(k) + 1
	return k
}

// head returns ev's time, goroutine, thread, proc and kind, as its methods
// would. (convert has it written out, so that the common case costs no
// call.)
func head(ev *trace.Event, kinds *kindCache) (trace.Time, trace.GoID, trace.ThreadID, trace.ProcID, trace.EventKind) {
	if !headOK {
		return headByMethods(ev)
	}
	h := (*eventHead)(unsafe.Pointer(ev))
	return trace.Time(h.time), trace.GoID(h.g), trace.ThreadID(h.m), trace.ProcID(h.p), kinds.of(h.typ, ev)
}

// headByMethods is head through the methods.
func headByMethods(ev *trace.Event) (trace.Time, trace.GoID, trace.ThreadID, trace.ProcID, trace.EventKind) {
	return ev.Time(), ev.Goroutine(), ev.Thread(), ev.Proc(), ev.Kind()
}
