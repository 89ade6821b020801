package jfr

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A synthetic chunk for the binary reader's unit tests and fuzz seeds:
// header, events, one checkpoint (or two, chained), metadata. The real
// recordings of TestBinaryMatchesPrint check the reader against the JDK;
// these check the corners a JVM rarely writes (string encodings,
// uncompressed integers, nulls, missing constants) and the errors.

// synthClass is a class of the synthetic metadata.
type synthClass struct {
	id     int64
	name   string
	super  string
	fields []synthField
}

type synthField struct {
	name  string
	class int64
	cp    bool
	array bool
	annot [][2]string // annotation class id, value
}

const (
	sBoolean, sInt, sLong, sFloat, sString              = 4, 5, 6, 7, 8
	sThread, sClass, sSymbol, sMethod, sFrame, sStack   = 20, 21, 22, 23, 24, 25
	sTimestamp, sTimespan, sUnsigned                    = 30, 31, 32
	sMonitorEnter, sCPULoad, sRequest, sJVMInfo, sOther = 100, 101, 102, 103, 104
	sTaskSubmit                                         = 105
	synTicksPerSecond                                   = 2_000_000_000 // two ticks a nanosecond
)

var (
	synStamp = [][2]string{{strconv.Itoa(sTimestamp), "TICKS"}}
	synSpan  = [][2]string{{strconv.Itoa(sTimespan), "TICKS"}}
	synHead  = []synthField{{name: "startTime", class: sLong, annot: synStamp}}
	synHeadD = []synthField{{name: "startTime", class: sLong, annot: synStamp}, {name: "duration", class: sLong, annot: synSpan}}
	synTail  = []synthField{{name: "eventThread", class: sThread, cp: true}, {name: "stackTrace", class: sStack, cp: true}}
)

var synthClasses = []synthClass{
	{id: sBoolean, name: "boolean"}, {id: sInt, name: "int"}, {id: sLong, name: "long"}, {id: sFloat, name: "float"},
	{id: sString, name: "java.lang.String"},
	{id: sTimestamp, name: "jdk.jfr.Timestamp", super: "java.lang.annotation.Annotation", fields: []synthField{{name: "value", class: sString}}},
	{id: sTimespan, name: "jdk.jfr.Timespan", super: "java.lang.annotation.Annotation", fields: []synthField{{name: "value", class: sString}}},
	{id: sUnsigned, name: "jdk.jfr.Unsigned", super: "java.lang.annotation.Annotation"},
	{id: sThread, name: "java.lang.Thread", fields: []synthField{{name: "osName", class: sString}, {name: "osThreadId", class: sLong}, {name: "javaName", class: sString}, {name: "javaThreadId", class: sLong}}},
	{id: sSymbol, name: "jdk.types.Symbol", fields: []synthField{{name: "string", class: sString}}},
	{id: sClass, name: "java.lang.Class", fields: []synthField{{name: "name", class: sSymbol, cp: true}, {name: "modifiers", class: sInt}}},
	{id: sMethod, name: "jdk.types.Method", fields: []synthField{{name: "type", class: sClass, cp: true}, {name: "name", class: sSymbol, cp: true}}},
	{id: sFrame, name: "jdk.types.StackFrame", fields: []synthField{{name: "method", class: sMethod, cp: true}, {name: "lineNumber", class: sInt}}},
	{id: sStack, name: "jdk.types.StackTrace", fields: []synthField{{name: "truncated", class: sBoolean}, {name: "frames", class: sFrame, array: true}}},
	{id: sMonitorEnter, name: "jdk.JavaMonitorEnter", super: "jdk.jfr.Event", fields: synCat(synHeadD, synTail, []synthField{{name: "monitorClass", class: sClass, cp: true}})},
	{id: sCPULoad, name: "jdk.CPULoad", super: "jdk.jfr.Event", fields: synCat(synHead, []synthField{{name: "jvmUser", class: sFloat}, {name: "jvmSystem", class: sFloat}, {name: "machineTotal", class: sFloat}})},
	{id: sRequest, name: "latscope.Request", super: "jdk.jfr.Event", fields: synCat(synHeadD, synTail, []synthField{{name: "route", class: sString}, {name: "traceparent", class: sString}, {name: "requestId", class: sLong}})},
	{id: sJVMInfo, name: "jdk.JVMInformation", super: "jdk.jfr.Event", fields: synCat(synHead, []synthField{{name: "jvmStartTime", class: sLong, annot: [][2]string{{strconv.Itoa(sTimestamp), "MILLISECONDS_SINCE_EPOCH"}}}})},
	{id: sOther, name: "jdk.Other", super: "jdk.jfr.Event", fields: synCat(synHead, synTail, []synthField{{name: "ints", class: sInt, array: true}, {name: "flag", class: sBoolean}})},
	{id: sTaskSubmit, name: "latscope.TaskSubmit", super: "jdk.jfr.Event", fields: synCat(synHead, synTail, []synthField{{name: "requestId", class: sLong}, {name: "taskId", class: sInt, annot: [][2]string{{strconv.Itoa(sUnsigned), ""}}}})},
}

func synCat(fs ...[]synthField) []synthField {
	var out []synthField
	for _, f := range fs {
		out = append(out, f...)
	}
	return out
}

// synthWriter writes values as a chunk whose integers are compressed or not.
type synthWriter struct {
	metaWriter
}

func (w *synthWriter) str(s string, enc byte) {
	w.WriteByte(enc)
	switch enc {
	case encUTF8:
		w.int(len(s))
		w.WriteString(s)
	case encLatin1:
		rs := []rune(s)
		w.int(len(rs))
		for _, r := range rs {
			w.WriteByte(byte(r))
		}
	case encChars:
		rs := []rune(s)
		w.int(len(rs))
		for _, r := range rs {
			w.short(int(r))
		}
	}
}

func (w *synthWriter) short(v int) {
	if !w.compressed {
		binary.Write(&w.Buffer, binary.BigEndian, int16(v))
		return
	}
	w.long(int64(uint16(v)))
}

func (w *synthWriter) f32(f float32) { binary.Write(&w.Buffer, binary.BigEndian, math.Float32bits(f)) }

// sized writes an event whose first integer (a long) is its size.
func (w *synthWriter) sized(body []byte) {
	sw := &synthWriter{metaWriter{compressed: w.compressed}}
	for n := len(body) + 1; ; n++ {
		sw.Reset()
		sw.long(int64(n))
		if sw.Len()+len(body) == n {
			break
		}
	}
	w.Write(sw.Bytes())
	w.Write(body)
}

// synthChunk builds a chunk whose events are those of the synthetic
// recording; t0 is its start, at tick 1000.
type synthChunk struct {
	compressed bool
	split      bool // constants in two chained checkpoints
}

var (
	synT0        = time.Date(2026, 12, 2, 14, 9, 40, 0, time.UTC)
	synStartTick = int64(1000)
)

func synTick(d time.Duration) int64 { return synStartTick + 2*int64(d) }

func (c synthChunk) build() []byte {
	w := func() *synthWriter { return &synthWriter{metaWriter{compressed: c.compressed}} }
	events := w()
	ev := func(typ int64, write func(e *synthWriter)) {
		e := w()
		e.long(typ)
		write(e)
		events.sized(e.Bytes())
	}
	// monitor enter: 5 ms from 10 ms, thread 1, stack 1, class 2 (null class: key 0)
	ev(sMonitorEnter, func(e *synthWriter) {
		e.long(synTick(10 * time.Millisecond))
		e.long(2 * int64(5*time.Millisecond))
		e.long(1)
		e.long(1)
		e.long(2)
	})
	// a request ending before the monitor enter, with strings in three encodings
	ev(sRequest, func(e *synthWriter) {
		e.long(synTick(2 * time.Millisecond))
		e.long(2 * int64(time.Millisecond))
		e.long(2)
		e.long(0) // no stack
		e.str("/démo", encLatin1)
		e.WriteByte(encPool)
		e.long(7) // traceparent from the string pool
		e.long(42)
	})
	ev(sCPULoad, func(e *synthWriter) {
		e.long(synTick(20 * time.Millisecond))
		e.f32(0.1)
		e.f32(float32(math.NaN()))
		e.f32(0.75)
	})
	ev(sJVMInfo, func(e *synthWriter) {
		e.long(synTick(0))
		e.long(synT0.Add(-time.Minute).UnixMilli())
	})
	ev(sOther, func(e *synthWriter) { // not asked for: skipped
		e.long(synTick(0))
		e.long(9) // thread not in the pool
		e.long(1)
		e.int(3)
		e.int(1)
		e.int(2)
		e.int(3)
		e.WriteByte(1)
	})
	ev(sTaskSubmit, func(e *synthWriter) {
		e.long(synTick(30 * time.Millisecond))
		e.long(9) // thread not in the pool
		e.long(2)
		e.long(42)
		e.int(-1) // unsigned: 2^32-1
	})
	ev(999, func(e *synthWriter) { e.long(5) }) // a type the metadata does not know

	// constants
	type pool struct {
		typ     int64
		entries []func(e *synthWriter) int64
	}
	sym := func(key int64, s string, enc byte) func(e *synthWriter) int64 {
		return func(e *synthWriter) int64 { e.long(key); e.str(s, enc); return key }
	}
	pools := []pool{
		{sString, []func(e *synthWriter) int64{func(e *synthWriter) int64 {
			e.long(7)
			e.str("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", encUTF8)
			return 7
		}}},
		{sThread, []func(e *synthWriter) int64{
			func(e *synthWriter) int64 {
				e.long(1)
				e.str("main-os", encUTF8)
				e.long(101)
				e.str("main", encChars)
				e.long(1)
				return 1
			},
			func(e *synthWriter) int64 {
				e.long(2)
				e.str("GC Thread#0", encUTF8)
				e.long(102)
				e.WriteByte(encNull)
				e.long(0)
				return 2
			},
		}},
		{sSymbol, []func(e *synthWriter) int64{sym(1, "java/lang/Object", encUTF8), sym(2, "wait", encLatin1), sym(3, "Probe$Pool", encChars), sym(4, "get", encUTF8)}},
		{sClass, []func(e *synthWriter) int64{
			func(e *synthWriter) int64 { e.long(1); e.long(1); e.int(1); return 1 },
			func(e *synthWriter) int64 { e.long(2); e.long(3); e.int(1); return 2 },
		}},
		{sMethod, []func(e *synthWriter) int64{
			func(e *synthWriter) int64 { e.long(1); e.long(1); e.long(2); return 1 },
			func(e *synthWriter) int64 { e.long(2); e.long(2); e.long(4); return 2 },
			func(e *synthWriter) int64 { e.long(3); e.long(5); e.long(4); return 3 }, // class 5 missing
		}},
		{sStack, []func(e *synthWriter) int64{func(e *synthWriter) int64 {
			e.long(1)
			e.WriteByte(1) // truncated
			e.int(4)
			for i, m := range []int64{1, 2, 3, 8} { // method 8 missing
				e.long(m)
				e.int(10 * (i + 1))
			}
			return 1
		}}},
	}
	cps := [][]pool{pools}
	if c.split {
		cps = [][]pool{pools[:3], pools[3:]}
	}
	var cpBytes []byte
	last, prev := 0, 0
	for i, ps := range cps {
		body := w()
		body.long(1) // checkpoint
		body.long(synTick(0))
		body.long(0)
		if i == 0 {
			body.long(0)
		} else {
			body.long(int64(prev - (headerSize + events.Len() + len(cpBytes)))) // back to the previous one
		}
		body.WriteByte(0)
		body.int(len(ps))
		for _, p := range ps {
			body.long(p.typ)
			body.int(len(p.entries))
			for _, e := range p.entries {
				e(body)
			}
		}
		cp := w()
		cp.sized(body.Bytes())
		prev = headerSize + events.Len() + len(cpBytes)
		last = prev
		cpBytes = append(cpBytes, cp.Bytes()...)
	}
	meta := c.metadata()
	h := make([]byte, headerSize)
	copy(h, "FLR\x00")
	binary.BigEndian.PutUint16(h[4:], 2)
	binary.BigEndian.PutUint16(h[6:], 1)
	size := headerSize + events.Len() + len(cpBytes) + len(meta)
	binary.BigEndian.PutUint64(h[offChunkSize:], uint64(size))
	binary.BigEndian.PutUint64(h[16:], uint64(last))
	binary.BigEndian.PutUint64(h[offMetadata:], uint64(headerSize+events.Len()+len(cpBytes)))
	binary.BigEndian.PutUint64(h[offStartNanos:], uint64(synT0.UnixNano()))
	binary.BigEndian.PutUint64(h[offDuration:], uint64(time.Second))
	binary.BigEndian.PutUint64(h[48:], uint64(synStartTick))
	binary.BigEndian.PutUint64(h[56:], synTicksPerSecond)
	if c.compressed {
		h[offFlags] = flagCompressed
	}
	return synConcat(h, events.Bytes(), cpBytes, meta)
}

func synConcat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// metadata writes the metadata event of synthClasses.
func (c synthChunk) metadata() []byte {
	var strs []string
	index := func(s string) int {
		for i, x := range strs {
			if x == s {
				return i
			}
		}
		strs = append(strs, s)
		return len(strs) - 1
	}
	type el struct {
		name  string
		attrs [][2]string
		kids  []el
	}
	var classes []el
	for _, cl := range synthClasses {
		e := el{name: "class", attrs: [][2]string{{"id", strconv.FormatInt(cl.id, 10)}, {"name", cl.name}}}
		if cl.super != "" {
			e.attrs = append(e.attrs, [2]string{"superType", cl.super})
		}
		for _, f := range cl.fields {
			fe := el{name: "field", attrs: [][2]string{{"name", f.name}, {"class", strconv.FormatInt(f.class, 10)}}}
			if f.cp {
				fe.attrs = append(fe.attrs, [2]string{"constantPool", "true"})
			}
			if f.array {
				fe.attrs = append(fe.attrs, [2]string{"dimension", "1"})
			}
			for _, a := range f.annot {
				ae := el{name: "annotation", attrs: [][2]string{{"class", a[0]}}}
				if a[1] != "" {
					ae.attrs = append(ae.attrs, [2]string{"value", a[1]})
				}
				fe.kids = append(fe.kids, ae)
			}
			e.kids = append(e.kids, fe)
		}
		classes = append(classes, e)
	}
	root := el{name: "root", kids: []el{{name: "metadata", kids: classes}, {name: "region", attrs: [][2]string{{"gmtOffset", "0"}}}}}
	var walk func(e el)
	walk = func(e el) { // fill the string table first
		index(e.name)
		for _, a := range e.attrs {
			index(a[0])
			index(a[1])
		}
		for _, k := range e.kids {
			walk(k)
		}
	}
	walk(root)
	body := &synthWriter{metaWriter{compressed: c.compressed}}
	body.long(0)
	body.long(synTick(0))
	body.long(0)
	body.long(1)
	body.int(len(strs))
	for _, s := range strs {
		body.str(s, encUTF8)
	}
	var write func(e el)
	write = func(e el) {
		body.int(index(e.name))
		body.int(len(e.attrs))
		for _, a := range e.attrs {
			body.int(index(a[0]))
			body.int(index(a[1]))
		}
		body.int(len(e.kids))
		for _, k := range e.kids {
			write(k)
		}
	}
	write(root)
	out := &synthWriter{metaWriter{compressed: c.compressed}}
	out.sized(body.Bytes())
	return out.Bytes()
}

// synthWant are the events of the synthetic chunk, in end-time order.
func synthWant(depth int) []Event {
	at := func(d time.Duration) time.Time { return synT0.Add(d) }
	frames := []Frame{{"java.lang.Object.wait", 10}, {"Probe$Pool.get", 20}, {".get", 30}, {".", 40}}
	n := min(depth, len(frames))
	return []Event{
		{Type: "jdk.JVMInformation", Start: at(0), JVMStart: synT0.Add(-time.Minute)},
		{Type: "latscope.Request", Start: at(2 * time.Millisecond), Duration: time.Millisecond,
			Thread: Thread{Name: "GC Thread#0", OSID: 102},
			Req:    ReqInfo{Route: "/démo", Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", RequestID: 42}},
		{Type: "jdk.JavaMonitorEnter", Start: at(10 * time.Millisecond), Duration: 5 * time.Millisecond,
			Thread: Thread{Name: "main", JavaID: 1, OSID: 101}, Stack: frames[:n:n], Truncated: true, MonitorClass: "Probe$Pool"},
		{Type: "jdk.CPULoad", Start: at(20 * time.Millisecond), Load: CPULoad{JVMUser: 0.1, MachineTotal: 0.75}},
		{Type: "latscope.TaskSubmit", Start: at(30 * time.Millisecond), Req: ReqInfo{RequestID: 42, TaskID: 1<<32 - 1}},
	}
}

var synthTypes = []string{"jdk.JavaMonitorEnter", "jdk.CPULoad", "latscope.Request", "jdk.JVMInformation", "latscope.TaskSubmit"}

func readSynth(data []byte, o PrintOptions) ([]Event, error) {
	var got []Event
	err := readBinary(context.Background(), "synth.jfr", bytes.NewReader(data), int64(len(data)), o, func(ev *Event) error {
		got = append(got, *ev)
		return nil
	})
	return got, err
}

func TestReadBinarySynthetic(t *testing.T) {
	tests := []struct {
		name  string
		chunk synthChunk
		depth int
	}{
		{"compressed", synthChunk{compressed: true}, DefaultStackDepth},
		{"uncompressed", synthChunk{}, DefaultStackDepth},
		{"chained checkpoints", synthChunk{compressed: true, split: true}, DefaultStackDepth},
		{"depth 2", synthChunk{compressed: true}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.chunk.build()
			got, err := readSynth(data, PrintOptions{StackDepth: tt.depth, Events: synthTypes})
			if err != nil {
				t.Fatal(err)
			}
			want := synthWant(tt.depth)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("events\n got %+v\nwant %+v", got, want)
			}
			// two chunks: the second one's ticks go through the first one's clock
			two, err := readSynth(append(append([]byte{}, data...), data...), PrintOptions{StackDepth: tt.depth, Events: synthTypes})
			if err != nil || len(two) != 2*len(want) || !reflect.DeepEqual(two[len(want):], want) {
				t.Errorf("two chunks: %d events, %v", len(two), err)
			}
		})
	}
	all, err := readSynth(synthChunk{compressed: true}.build(), PrintOptions{StackDepth: 1})
	if err != nil || len(all) != 6 {
		t.Fatalf("every event type: %d events, %v; want 6 (the unknown type skipped)", len(all), err)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Type < all[j].Type })
	if o := all[3]; o.Type != "jdk.Other" || o.Thread != (Thread{}) || len(o.Stack) != 1 {
		t.Errorf("jdk.Other: %+v", o)
	}
}

func TestReadBinaryErrors(t *testing.T) {
	good := synthChunk{compressed: true}.build()
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	metaAt := int(binary.BigEndian.Uint64(good[offMetadata:]))
	cpAt := int(binary.BigEndian.Uint64(good[16:]))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "synth.jfr: empty file"},
		{"not jfr", []byte(strings.Repeat("hello, world! ", 10)), "synth.jfr: byte 0: chunk at 0: not a JFR recording"},
		{"truncated", good[:len(good)-10], "truncated or still being written"},
		{"zero event size", mod(func(b []byte) []byte { b[headerSize] = 0; return b }), "byte 68: chunk at 0: event size 0"},
		{"bad checkpoint", mod(func(b []byte) []byte { binary.BigEndian.PutUint64(b[16:], uint64(headerSize)); return b }), "where a checkpoint (type 1) should be"},
		{"bad metadata", mod(func(b []byte) []byte { b[metaAt+2] = 5; return b }), "byte " + strconv.Itoa(metaAt) + ": chunk at 0: metadata"},
		{"bad string encoding", mod(func(b []byte) []byte {
			i := bytes.Index(b[cpAt:], []byte("main-os"))
			b[cpAt+i-2] = 9
			return b
		}), "string encoding 9"},
		{"second chunk bad", append(append([]byte{}, good...), good[:100]...), "chunk at " + strconv.Itoa(len(good)) + ": chunk size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readSynth(tt.data, PrintOptions{StackDepth: 5, Events: synthTypes})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	stop := errors.New("stop")
	n := 0
	err := readBinary(context.Background(), "synth.jfr", bytes.NewReader(good), int64(len(good)), PrintOptions{Events: synthTypes}, func(*Event) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("callback error: %v after %d events, want it as is after 1", err, n)
	}
}

func FuzzReadBinary(f *testing.F) {
	f.Add(synthChunk{compressed: true}.build())
	f.Add(synthChunk{compressed: true, split: true}.build())
	f.Add(synthChunk{}.build())
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []PrintOptions{{StackDepth: 2, Events: synthTypes}, {StackDepth: 1}} {
			err := readBinary(context.Background(), "fuzz.jfr", bytes.NewReader(data), int64(len(data)), o, func(ev *Event) error {
				if ev.Duration < 0 || len(ev.Stack) > o.StackDepth || ev.Type == "" {
					t.Fatalf("event %+v", ev)
				}
				return nil
			})
			if err != nil && !strings.HasPrefix(err.Error(), "fuzz.jfr: ") {
				t.Fatalf("error without the file's name: %v", err)
			}
		}
	})
}
