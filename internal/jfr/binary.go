package jfr

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// ReadBinary reads the recording at path itself — no JDK needed — and calls
// fn with each event whose type is in o.Events (every event when it is
// empty), producing the same Event values, in the same order, as Print:
// within each chunk, events sorted by their end time as `jfr print` sorts
// them. o.StackDepth cuts stacks as --stack-depth does; o.Tool is not used.
// ev is reused: fn must copy what it keeps. Event.Stack may be shared
// between events and must not be modified. An error from fn stops the read
// and is returned as is; bad input is an error naming path and the byte
// offset. docs/jfr-format.md describes the format and what is not read.
//
// Memory is bounded by the largest chunk (JFR's maxchunksize, 12 MB by
// default): a chunk is read whole, its constant pools are indexed, and of
// its events only the position and end time of those in o.Events are kept
// to sort them.
func ReadBinary(ctx context.Context, path string, o PrintOptions, fn func(ev *Event) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return readBinary(ctx, path, f, st.Size(), o, fn)
}

// binReader reads the chunks of one recording.
type binReader struct {
	name  string
	depth int
	want  map[string]bool // nil: every event type
	buf   []byte
	// prev is the chunk read before, in prevBuf: a stack trace an event
	// refers to is resolved there when its own chunk lacks it (the JVM
	// writes events at a chunk's rotation that refer to stack traces of
	// the chunk before, and the JDK's reader keeps that chunk's constants)
	prev    *chunkState
	prevBuf []byte
	// the first chunk's clock converts every chunk's ticks, as the JDK does
	clock *binClock
	ents  []binEntry
}

// binEntry is an event to deliver: when it ends and where it is (no
// pointer: the garbage collector need not scan the sort's entries).
type binEntry struct {
	end int64 // ticks
	off int64
}

func readBinary(ctx context.Context, name string, r io.ReaderAt, size int64, o PrintOptions, fn func(*Event) error) error {
	br := &binReader{name: name, depth: max(o.StackDepth, 1)}
	if len(o.Events) > 0 {
		br.want = make(map[string]bool, len(o.Events))
		for _, e := range o.Events {
			br.want[e] = true
		}
	}
	if size == 0 {
		return fmt.Errorf("%s: empty file: %w", name, ErrNotJFR)
	}
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := br.chunk(ctx, r, off, size-off, fn)
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// binClock converts a chunk's ticks to nanoseconds as the JDK's TimeConverter
// does (in double precision, truncated).
type binClock struct {
	startTicks, startNanos int64
	divisor                float64
}

// newBinClock is the clock of a chunk header's start ticks, start
// nanoseconds and ticks per second.
func newBinClock(startTicks, startNanos, ticksPerSecond int64) *binClock {
	return &binClock{startTicks: startTicks, startNanos: startNanos, divisor: float64(ticksPerSecond) / 1e9}
}

func (t *binClock) stamp(v int64) int64 {
	return t.startNanos + javaLong(float64(v-t.startTicks)/t.divisor)
}
func (t *binClock) span(v int64) int64 { return javaLong(float64(v) / t.divisor) }

// javaLong converts as Java's (long) cast does: NaN is 0, and values out of
// range saturate.
func javaLong(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// chunk reads the chunk at off and delivers its events; it returns the
// chunk's size.
func (br *binReader) chunk(ctx context.Context, r io.ReaderAt, off, left int64, fn func(*Event) error) (int64, error) {
	var h [headerSize]byte
	errf := func(at int64, format string, args ...any) error {
		return fmt.Errorf("%s: byte %d: chunk at %d: "+format, append([]any{br.name, off + at, off}, args...)...)
	}
	if left < headerSize {
		return 0, errf(0, "%w", shortHeader(r, off, left))
	}
	if _, err := r.ReadAt(h[:], off); err != nil {
		return 0, fmt.Errorf("%s: %w", br.name, err)
	}
	if string(h[:4]) != "FLR\x00" {
		return 0, errf(0, "%w", ErrNotJFR)
	}
	if major := binary.BigEndian.Uint16(h[4:]); major != 1 && major != 2 {
		return 0, errf(4, "file format %d.%d, want 1.x or 2.x", major, binary.BigEndian.Uint16(h[6:]))
	}
	if h[64] == stateUpdating {
		return 0, errf(64, "the JVM is still writing this chunk; read the recording after it stops")
	}
	be := func(o int) int64 { return int64(binary.BigEndian.Uint64(h[o:])) }
	size, cpPos, metaPos := be(offChunkSize), be(16), be(offMetadata)
	if size < headerSize || size > left {
		return 0, errf(offChunkSize, "chunk size %d outside [%d, %d]: truncated or still being written", size, headerSize, left)
	}
	if metaPos < headerSize || metaPos >= size {
		return 0, errf(offMetadata, "metadata offset %d outside the chunk (size %d)", metaPos, size)
	}
	if cpPos < headerSize || cpPos >= size {
		return 0, errf(16, "constant pool offset %d outside the chunk (size %d)", cpPos, size)
	}
	if int64(cap(br.buf)) < size {
		br.buf = make([]byte, size)
	}
	b := br.buf[:size]
	if _, err := r.ReadAt(b, off); err != nil && !(err == io.EOF) {
		return 0, fmt.Errorf("%s: %w", br.name, err)
	}
	compressed := h[offFlags]&flagCompressed != 0
	meta, err := parseMetadata(b[metaPos:], compressed)
	if err != nil {
		return 0, errf(metaPos, "metadata: %w", err)
	}
	if br.clock == nil {
		br.clock = newBinClock(be(offStartTicks), be(offStartNanos), be(offTicksPerSecond))
	}
	c := &chunkState{binRd: binRd{b: b, compressed: compressed}, br: br, meta: meta, prev: br.prev}
	if err := c.try(func() { c.indexPools(int(cpPos)) }); err != nil {
		return 0, c.wrap(off, err)
	}
	// the chunk's events of the wanted types, sorted by end time
	wanted := map[int64]*binType{}
	for id, t := range meta.types {
		if t.event && (br.want == nil || br.want[t.name]) {
			wanted[id] = t
		}
	}
	br.ents = br.ents[:0]
	if err := c.try(func() { br.ents = c.scan(wanted, br.ents) }); err != nil {
		return 0, c.wrap(off, err)
	}
	// by end time, ties in the file's order: the JDK's stable sort
	slices.SortFunc(br.ents, func(a, b binEntry) int {
		if c := cmp.Compare(a.end, b.end); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	var ev Event
	for i, e := range br.ents {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if err := c.try(func() { c.event(int(e.off), wanted, &ev) }); err != nil {
			return 0, c.wrap(off, err)
		}
		if err := fn(&ev); err != nil {
			return 0, err
		}
	}
	c.prev = nil // one chunk back, no further
	br.prev, br.buf, br.prevBuf = c, br.prevBuf, br.buf
	return size, nil
}

// chunkState is what reading one chunk needs: its bytes, metadata, the
// positions of its constants and the constants resolved so far.
type chunkState struct {
	binRd
	br   *binReader
	meta *binMeta
	nest int         // nesting of constant resolution
	prev *chunkState // the chunk before, for stack traces this one lacks
}

type binStack struct {
	frames    []Frame
	truncated bool
}

type binText struct {
	s  string
	ok bool
}

// try runs f and turns the reader's failure into an error.
func (c *chunkState) try(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			be, ok := p.(binErr)
			if !ok {
				panic(p)
			}
			err = be
		}
	}()
	f()
	return nil
}

func (e binErr) Error() string { return e.err.Error() }
func (e binErr) Unwrap() error { return e.err }

// wrap names the file and the byte of a failure in the chunk at base.
func (c *chunkState) wrap(base int64, err error) error {
	var be binErr
	if errors.As(err, &be) {
		return fmt.Errorf("%s: byte %d: chunk at %d: %w", c.br.name, base+int64(be.off), base, be.err)
	}
	return fmt.Errorf("%s: chunk at %d: %w", c.br.name, base, err)
}

// maxBinNest bounds nested values and constant references (the JDK's deepest
// is a stack trace's frame's method's class's package's name, 6).
const maxBinNest = 64

// indexPools follows the checkpoint events from the last one (at cpPos)
// back along their deltas and records where each constant's value is. A
// key in several checkpoints keeps the earliest, as the JDK's reader does.
func (c *chunkState) indexPools(cpPos int) {
	seen := map[int]bool{}
	for pos := cpPos; ; {
		if pos < headerSize || pos >= len(c.b) || seen[pos] {
			c.fail("checkpoint chain reaches offset %d", pos)
		}
		seen[pos] = true
		c.off = pos
		size := c.long()
		if size <= 0 || size > int64(len(c.b)-pos) {
			c.fail("checkpoint size %d outside (0, %d]", size, len(c.b)-pos)
		}
		if typ := c.long(); typ != 1 {
			c.fail("event type %d where a checkpoint (type 1) should be", typ)
		}
		c.long() // start
		c.long() // duration
		delta := c.long()
		c.u8() // checkpoint kind
		n := c.int32()
		if n < 0 {
			c.fail("%d constant pools", n)
		}
		for range n {
			tid := c.long()
			t := c.meta.types[tid]
			if t == nil {
				c.fail("constant pool of type %d, which the metadata does not define", tid)
			}
			pool := t.pool
			if pool == nil {
				pool = map[int64]int{}
				t.pool = pool
			}
			m := c.int32()
			if m < 0 || int(m) > len(c.b)-c.off {
				c.fail("%d constants of %s", m, t.name)
			}
			for range m {
				key := c.long()
				pool[key] = c.off
				c.skipValue(t, 0)
			}
		}
		if c.off != pos+int(size) {
			c.fail("checkpoint at %d is %d bytes, its pools %d", pos, size, c.off-pos)
		}
		if delta == 0 {
			return
		}
		if delta < int64(-pos) || delta > int64(len(c.b)) {
			c.fail("checkpoint delta %d leaves the chunk", delta)
		}
		pos += int(delta)
	}
}

// scan walks the chunk's events and appends those of the wanted types.
func (c *chunkState) scan(wanted map[int64]*binType, ents []binEntry) []binEntry {
	for off := headerSize; off < len(c.b); {
		c.off = off
		size := c.long()
		if size <= 0 || size > int64(len(c.b)-off) {
			c.off = off
			c.fail("event size %d outside (0, %d]", size, len(c.b)-off)
		}
		if t := wanted[c.long()]; t != nil {
			start := c.long()
			end := start
			if t.hasDuration() {
				end += c.long()
			}
			ents = append(ents, binEntry{end: end, off: int64(off)})
		}
		off += int(size)
	}
	return ents
}

// hasDuration says whether events of t have a duration: the JDK reads
// their second field as one when the type has a field named duration.
func (t *binType) hasDuration() bool {
	p := t.planOf()
	return p.duration
}

// binAction is what the event reader does with a field.
type binAction uint8

const (
	actSkip binAction = iota
	actThread
	actSampled
	actStack
	actSettingID
	actSettingName
	actSettingValue
	actJVMStart
	actHWThreads
	actJVMUser
	actJVMSystem
	actMachineTotal
	actMonitorClass
	actRoute
	actTraceparent
	actRequestID
	actTaskID
	actCPUTime
	actHoldName
	actQueueTime
	actHoldSite
	actServerWorkers
	actCompileTime
	actCompileCount
)

// binPlan is how the event reader reads events of a type.
type binPlan struct {
	duration bool
	acts     []binAction
	err      error // a field decode.go requires is missing
}

// binTypedFields are the fields decode.go reads by event type, and whether it
// fails when they are missing (it parses them as numbers).
var binTypedFields = map[string][]struct {
	name     string
	act      binAction
	required bool
}{
	"jdk.ActiveSetting":      {{"id", actSettingID, true}, {"name", actSettingName, false}, {"value", actSettingValue, false}},
	"jdk.JVMInformation":     {{"jvmStartTime", actJVMStart, false}},
	"jdk.CPUInformation":     {{"hwThreads", actHWThreads, true}},
	"jdk.CPULoad":            {{"jvmUser", actJVMUser, true}, {"jvmSystem", actJVMSystem, true}, {"machineTotal", actMachineTotal, true}},
	"jdk.CompilerStatistics": {{"totalTimeSpent", actCompileTime, true}, {"compileCount", actCompileCount, true}},
	"jdk.JavaMonitorEnter":   {{"monitorClass", actMonitorClass, false}},
	"jdk.JavaMonitorWait":    {{"monitorClass", actMonitorClass, false}},
	"latscope.Request":       {{"route", actRoute, false}, {"traceparent", actTraceparent, false}, {"requestId", actRequestID, true}, {"cpuTime", actCPUTime, false}, {"queueTime", actQueueTime, false}, {"serverWorkers", actServerWorkers, false}},
	"latscope.TaskSubmit":    {{"requestId", actRequestID, true}, {"taskId", actTaskID, true}},
	"latscope.TaskRun":       {{"requestId", actRequestID, true}, {"taskId", actTaskID, true}, {"cpuTime", actCPUTime, false}},
	"latscope.TaskWait":      {{"requestId", actRequestID, true}, {"taskId", actTaskID, true}},
	"latscope.Hold":          {{"name", actHoldName, false}, {"site", actHoldSite, false}, {"requestId", actRequestID, true}, {"cpuTime", actCPUTime, false}},
}

func (t *binType) planOf() *binPlan {
	if t.plan != nil {
		return t.plan
	}
	p := &binPlan{acts: make([]binAction, len(t.fields))}
	for i, f := range t.fields {
		switch f.name {
		case "duration":
			p.duration = true
		case "eventThread":
			p.acts[i] = actThread
		case "sampledThread":
			p.acts[i] = actSampled
		case "stackTrace":
			p.acts[i] = actStack
		}
	}
	for _, tf := range binTypedFields[t.name] {
		i := slices.IndexFunc(t.fields, func(f binField) bool { return f.name == tf.name })
		switch {
		case i >= 0:
			p.acts[i] = tf.act
		case tf.required && p.err == nil:
			p.err = fmt.Errorf("event type %s has no field %s", t.name, tf.name)
		}
	}
	t.plan = p
	return p
}

// event decodes the event at off, of one of the wanted types, into ev.
func (c *chunkState) event(off int, wanted map[int64]*binType, ev *Event) {
	c.off = off
	size := int(c.long())
	t := wanted[c.long()]
	*ev = Event{Type: t.name}
	p := t.planOf()
	if p.err != nil {
		c.fail("%w", p.err)
	}
	if len(t.fields) == 0 {
		c.fail("event type %s has no fields", t.name)
	}
	// the JDK reads the first field as the start and, if the type has a
	// duration, the second as the duration, whatever their types
	start := c.long()
	ev.Start = time.Unix(0, c.br.clock.stamp(start)).UTC()
	first := 1
	if p.duration {
		first = 2
		d := c.long()
		if d != 0 {
			if d == math.MaxInt64 || d == math.MinInt64 {
				c.fail("duration %d binClock out of range", d)
			}
			ns := c.br.clock.span(d)
			if ns < 0 {
				c.fail("negative duration %d ticks", d)
			}
			ev.Duration = time.Duration(ns)
		}
	}
	var sampled *Thread
	for i := first; i < len(t.fields); i++ {
		f := &t.fields[i]
		switch p.acts[i] {
		case actSkip:
			c.skipField(f, 0)
		case actThread:
			if th := c.thread(f); th != nil && sampled == nil {
				ev.Thread = *th
			}
		case actSampled: // wins over eventThread, as in decode.go
			if sampled = c.thread(f); sampled != nil {
				ev.Thread = *sampled
			}
		case actStack:
			if s := c.stack(f); s != nil {
				n := min(len(s.frames), c.br.depth)
				ev.Stack = s.frames[:n:n]
				ev.Truncated = s.truncated
			}
		case actSettingID:
			ev.Setting.TypeID = c.requireInt(f)
		case actSettingName:
			ev.Setting.Name, _ = c.text(f)
		case actSettingValue:
			ev.Setting.Value, _ = c.text(f)
		case actJVMStart:
			ev.JVMStart = c.timestamp(f)
		case actHWThreads:
			ev.HWThreads = int(c.requireInt(f))
		case actJVMUser:
			ev.Load.JVMUser = c.requireFloat(f)
		case actJVMSystem:
			ev.Load.JVMSystem = c.requireFloat(f)
		case actMachineTotal:
			ev.Load.MachineTotal = c.requireFloat(f)
		case actMonitorClass:
			s, _ := c.className(f)
			ev.MonitorClass = strings.ReplaceAll(s, "/", ".")
		case actRoute:
			ev.Req.Route, _ = c.text(f)
		case actTraceparent:
			ev.Req.Traceparent, _ = c.text(f)
		case actRequestID:
			ev.Req.RequestID = c.requireInt(f)
		case actTaskID:
			if t.name != "latscope.Request" {
				ev.Req.TaskID = c.requireInt(f)
			} else {
				c.skipField(f, 0)
			}
		case actQueueTime:
			if v := c.requireInt(f); v >= 0 {
				ev.Req.Queue, ev.Req.HasQueue = time.Duration(v), true
			}
		case actServerWorkers:
			if v := c.requireInt(f); v > 0 && v <= maxWorkers {
				ev.Req.Workers = int(v)
			}
		case actHoldSite:
			ev.Req.Site, _ = c.text(f)
		case actHoldName:
			ev.Req.Name, _ = c.text(f)
		case actCompileTime:
			ev.Compiler.Time = c.timespan(f)
		case actCompileCount:
			ev.Compiler.Count = c.requireInt(f)
		case actCPUTime:
			if v := c.requireInt(f); v >= 0 {
				ev.Req.CPU, ev.Req.HasCPU = time.Duration(v), true
			}
		}
	}
	if c.off > off+size {
		c.off = off
		c.fail("event of %d bytes whose fields take %d", size, c.off-off)
	}
}

// skipValue skips a value of type t.
func (c *chunkState) skipValue(t *binType, depth int) {
	switch t.prim {
	case primStruct:
		if t.empty {
			return
		}
		if depth > maxBinNest {
			c.fail("values of %s nested over %d deep", t.name, maxBinNest)
		}
		for i := range t.fields {
			c.skipField(&t.fields[i], depth+1)
		}
	case primBoolean, primByte:
		c.u8()
	case primChar, primShort:
		c.short16()
	case primInt:
		c.int32()
	case primLong:
		c.long()
	case primFloat:
		c.raw(4)
	case primDouble:
		c.raw(8)
	case primString:
		c.skipString()
	default:
		c.fail("type %s has no fields and is not a primitive", t.name)
	}
}

// skipField skips the value of field f.
func (c *chunkState) skipField(f *binField, depth int) {
	if !f.array {
		if f.cp {
			c.long()
		} else {
			c.skipValue(f.typ, depth)
		}
		return
	}
	n := c.count()
	for i := 0; i < n; i++ {
		at := c.off
		if f.cp {
			c.long()
		} else {
			c.skipValue(f.typ, depth)
		}
		if c.off == at { // values of this type take no bytes
			return
		}
	}
}

// lookup returns where the constant key of type t is.
func (c *chunkState) lookup(t *binType, key int64) (int, bool) {
	off, ok := t.pool[key]
	return off, ok
}

// at runs f with the reader at off, then returns to where it was.
func (c *chunkState) at(off int, f func()) {
	if c.nest++; c.nest > maxBinNest {
		c.fail("constants nested over %d deep", maxBinNest)
	}
	saved := c.off
	c.off = off
	f()
	c.off = saved
	c.nest--
}

// walk reads the fields of a value of struct type t at the reader's
// position: read handles the fields it wants (reading them) and returns
// true; the others are skipped.
func (c *chunkState) walk(t *binType, read func(f *binField) bool) {
	if t.prim != primStruct {
		c.skipValue(t, 0)
		return
	}
	for i := range t.fields {
		f := &t.fields[i]
		if f.array || !read(f) {
			c.skipField(f, 0)
		}
	}
}

// value reads field f: a constant pool reference is followed to its value,
// which read then reads at the constant's position; inline values are read
// where they are. ok is false for a null reference or a key that is in no
// pool, as the JDK reads them as null.
func (c *chunkState) value(f *binField, read func()) (ok bool) {
	if !f.cp {
		read()
		return true
	}
	key := c.long()
	off, ok := c.lookup(f.typ, key)
	if !ok {
		return false
	}
	c.at(off, read)
	return true
}

// text reads field f as a string: a string, or a constant whose type has one
// field holding one (a symbol). ok is false for null.
func (c *chunkState) text(f *binField) (string, bool) {
	if f.array {
		c.skipField(f, 0)
		return "", false
	}
	if f.cp {
		key := c.long()
		t := f.typ
		if v, ok := t.texts[key]; ok {
			return v.s, v.ok
		}
		var v binText
		if off, ok := c.lookup(t, key); ok {
			c.at(off, func() { v.s, v.ok = c.textOf(t) })
		}
		if t.texts == nil {
			t.texts = map[int64]binText{}
		}
		t.texts[key] = v
		return v.s, v.ok
	}
	return c.textOf(f.typ)
}

// textOf reads a value of type t as a string.
func (c *chunkState) textOf(t *binType) (string, bool) {
	switch {
	case t.prim == primString:
		s, null, key, pooled := c.inlineString()
		if pooled {
			var v binText
			if off, ok := c.lookup(t, key); ok {
				c.at(off, func() { v.s, v.ok = c.textOf(t) })
			}
			return v.s, v.ok
		}
		return s, !null
	case t.prim == primStruct && len(t.fields) == 1:
		if c.nest++; c.nest > maxBinNest {
			c.fail("values of %s nested over %d deep", t.name, maxBinNest)
		}
		s, ok := c.text(&t.fields[0])
		c.nest--
		return s, ok
	default:
		c.skipValue(t, 0)
		return "", false
	}
}

// integer reads field f as a Java integer, as `jfr print` prints it (an
// @Unsigned byte, short or int is zero-extended). ok is false for a field
// that is not an integer.
func (c *chunkState) integer(f *binField) (int64, bool) {
	if f.array || f.cp {
		c.skipField(f, 0)
		return 0, false
	}
	switch f.typ.prim {
	case primByte:
		v := c.u8()
		if f.unsigned {
			return int64(v), true
		}
		return int64(int8(v)), true
	case primShort:
		v := c.short16()
		if f.unsigned {
			return int64(v), true
		}
		return int64(int16(v)), true
	case primChar:
		return int64(c.short16()), true
	case primInt:
		v := c.int32()
		if f.unsigned {
			return int64(uint32(v)), true
		}
		return int64(v), true
	case primLong:
		v := c.long()
		if f.unsigned && v < 0 {
			c.fail("field %s: unsigned %d is over 2^63", f.name, uint64(v))
		}
		return v, true
	}
	c.skipField(f, 0)
	return 0, false
}

func (c *chunkState) requireInt(f *binField) int64 {
	at := c.off
	v, ok := c.integer(f)
	if !ok {
		c.off = at
		c.fail("field %s is %s, want an integer", f.name, f.typ.name)
	}
	return v
}

// requireFloat reads a number field as a float64 equal to the one decode.go
// parses from jfr print's text: a float prints with the digits that
// identify it as a float. NaN and infinities, which jfr print prints as
// null, read as 0.
func (c *chunkState) requireFloat(f *binField) float64 {
	at := c.off
	var v float64
	switch {
	case f.array || f.cp:
	case f.typ.prim == primFloat:
		v = float32Text(c.float32())
	case f.typ.prim == primDouble:
		v = c.float64()
	default:
		i, ok := c.integer(f)
		if !ok {
			c.off = at
			c.fail("field %s is %s, want a number", f.name, f.typ.name)
		}
		return float64(i)
	}
	if f.array || f.cp {
		c.fail("field %s is %s, want a number", f.name, f.typ.name)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// timespan reads a @Timespan field as a duration; a negative or unknown
// value, or one of no known unit, reads as 0, as decode.go reads jfr
// print's.
func (c *chunkState) timespan(f *binField) time.Duration {
	v := c.requireInt(f)
	if v <= 0 || v == math.MaxInt64 {
		return 0
	}
	var ns float64
	switch f.span {
	case unitTicks:
		return time.Duration(c.br.clock.span(v))
	case unitNanos:
		ns = float64(v)
	case unitMicros:
		ns = float64(v) * 1e3
	case unitMillis:
		ns = float64(v) * 1e6
	case unitSeconds:
		ns = float64(v) * 1e9
	default: // no unit to read it by: unknown, as a value jfr print cannot print
		return 0
	}
	if ns >= math.MaxInt64 {
		return 0
	}
	return time.Duration(ns)
}

// timestamp reads a @Timestamp field.
func (c *chunkState) timestamp(f *binField) time.Time {
	v, ok := c.integer(f)
	if !ok || v == math.MinInt64 {
		return time.Time{}
	}
	switch f.stamp {
	case unitTicks:
		return time.Unix(0, c.br.clock.stamp(v)).UTC()
	case unitMillisSinceEpoch:
		return time.UnixMilli(v).UTC()
	}
	return time.Time{}
}

// thread reads a java.lang.Thread field; nil for null.
func (c *chunkState) thread(f *binField) *Thread {
	if f.cp {
		t, key := f.typ, c.long()
		if th, ok := t.threads[key]; ok {
			return th
		}
		var th *Thread
		if off, ok := c.lookup(t, key); ok {
			c.at(off, func() { th = c.threadOf(t) })
		}
		if t.threads == nil {
			t.threads = map[int64]*Thread{}
		}
		t.threads[key] = th
		return th
	}
	return c.threadOf(f.typ)
}

func (c *chunkState) threadOf(t *binType) *Thread {
	var javaName, osName string
	th := &Thread{}
	c.walk(t, func(f *binField) bool {
		switch f.name {
		case "javaName":
			javaName, _ = c.text(f)
		case "osName":
			osName, _ = c.text(f)
		case "javaThreadId":
			th.JavaID, _ = c.integer(f)
		case "osThreadId":
			th.OSID, _ = c.integer(f)
		default:
			return false
		}
		return true
	})
	th.Name = javaName
	if th.Name == "" {
		th.Name = osName
	}
	return th
}

// stack reads a stack trace field; nil for null.
func (c *chunkState) stack(f *binField) *binStack {
	if !f.cp {
		return c.stackOf(f.typ)
	}
	t, key := f.typ, c.long()
	if s, ok := t.stacks[key]; ok {
		return s
	}
	var s *binStack
	if off, ok := c.lookup(t, key); ok {
		c.at(off, func() { s = c.stackOf(t) })
	} else if p, pt := c.prevType(t); pt != nil {
		if off, ok := p.lookup(pt, key); ok {
			p.at(off, func() { s = p.stackOf(pt) })
		}
	}
	if t.stacks == nil {
		t.stacks = map[int64]*binStack{}
	}
	t.stacks[key] = s
	return s
}

// prevType returns the chunk before and its type named as t, when there
// is one.
func (c *chunkState) prevType(t *binType) (*chunkState, *binType) {
	if c.prev == nil {
		return nil, nil
	}
	for _, pt := range c.prev.meta.types {
		if pt.name == t.name {
			return c.prev, pt
		}
	}
	return nil, nil
}

func (c *chunkState) stackOf(t *binType) *binStack {
	s := &binStack{}
	if t.prim != primStruct {
		c.skipValue(t, 0)
		return s
	}
	for i := range t.fields {
		f := &t.fields[i]
		switch {
		case f.name == "truncated" && !f.array && !f.cp && f.typ.prim == primBoolean:
			s.truncated = c.u8() != 0
		case f.name == "frames" && f.array:
			n := c.count()
			s.frames = make([]Frame, 0, min(n, 4096))
			for range n {
				var fr Frame
				read := func() { fr = c.frameOf(f.typ) }
				if f.cp {
					if !c.value(f, read) {
						fr = Frame{Method: methodName("", "")}
					}
				} else {
					read()
				}
				s.frames = append(s.frames, fr)
			}
		default:
			c.skipField(f, 0)
		}
	}
	if s.frames == nil {
		s.frames = []Frame{}
	}
	return s
}

// frameOf reads a stack frame: its method and line.
func (c *chunkState) frameOf(t *binType) Frame {
	fr := Frame{Method: methodName("", "")}
	c.walk(t, func(f *binField) bool {
		switch f.name {
		case "method":
			fr.Method = c.method(f)
		case "lineNumber":
			v, _ := c.integer(f)
			fr.Line = int(v)
		default:
			return false
		}
		return true
	})
	return fr
}

// method reads a method field as "package.Class.method".
func (c *chunkState) method(f *binField) string {
	if !f.cp {
		return c.methodOf(f.typ)
	}
	t, key := f.typ, c.long()
	if m, ok := t.methods[key]; ok {
		return m
	}
	m := methodName("", "")
	if off, ok := c.lookup(t, key); ok {
		c.at(off, func() { m = c.methodOf(t) })
	}
	if t.methods == nil {
		t.methods = map[int64]string{}
	}
	t.methods[key] = m
	return m
}

func (c *chunkState) methodOf(t *binType) string {
	var class, name string
	c.walk(t, func(f *binField) bool {
		switch f.name {
		case "type":
			class, _ = c.className(f)
		case "name":
			name, _ = c.text(f)
		default:
			return false
		}
		return true
	})
	return methodName(class, name)
}

// className reads a java.lang.Class field's name ("java/lang/Thread").
func (c *chunkState) className(f *binField) (string, bool) {
	var name string
	var ok bool
	read := func() {
		c.walk(f.typ, func(g *binField) bool {
			if g.name != "name" {
				return false
			}
			name, ok = c.text(g)
			return true
		})
	}
	if f.array {
		c.skipField(f, 0)
		return "", false
	}
	if !c.value(f, read) {
		return "", false
	}
	return name, ok
}
