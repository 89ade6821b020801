package jfr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"
)

// Chunk is what one chunk's header and metadata say. A recording file is one
// or more chunks back to back.
type Chunk struct {
	Offset   int64 // byte offset of the chunk in the file
	Start    time.Time
	Duration time.Duration
	// Types maps event type ids to names ("jdk.ThreadPark"). jdk.ActiveSetting
	// events name the event type they configure by this id only.
	Types map[int64]string

	// the chunk's clock, from its header: its ticks at Start and the
	// ticks per second (clockStart)
	startTicks, ticksPerSecond int64
}

// Recording is the chunk list of a .jfr file.
type Recording struct {
	Chunks []Chunk
}

// clockStart returns chunk i's start on the first chunk's clock, the one
// every event's ticks are converted with (as the JDK does: binClock): an
// event written in chunk i is at or after it. The chunk's own Start (its
// header's nanoseconds) is on the wall clock, which drifts from the first
// chunk's ticks: 15 s into a recording the settings a chunk begins with
// were seen to lie before its Start, in the chunk before, so a threshold
// lowered while a second recording ran was read as lowered from the
// start. Without ticks in the headers (a Chunk built by hand), Start.
func (r *Recording) clockStart(i int) time.Time {
	c0, c := r.Chunks[0], r.Chunks[i]
	if i == 0 || c0.ticksPerSecond <= 0 || c.ticksPerSecond <= 0 {
		return c.Start
	}
	return time.Unix(0, newBinClock(c0.startTicks, c0.Start.UnixNano(), c0.ticksPerSecond).stamp(c.startTicks)).UTC()
}

// Start returns when the recording began: the first chunk's start.
func (r *Recording) Start() time.Time { return r.Chunks[0].Start }

// End returns when the recording ended: the last chunk's end.
func (r *Recording) End() time.Time {
	c := r.Chunks[len(r.Chunks)-1]
	return c.Start.Add(c.Duration)
}

// TypeName returns the name of event type id, or "" when no chunk knows it.
func (r *Recording) TypeName(id int64) string {
	for _, c := range r.Chunks {
		if n, ok := c.Types[id]; ok {
			return n
		}
	}
	return ""
}

// ReadRecording reads the chunk headers and metadata of the .jfr file path.
func ReadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	cs, err := ReadChunks(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Recording{Chunks: cs}, nil
}

// Chunk header layout (JDK 11+ file format 2.x; 1.x has the same fields).
const (
	headerSize        = 68
	offChunkSize      = 8
	offMetadata       = 24
	offStartNanos     = 32
	offDuration       = 40
	offStartTicks     = 48
	offTicksPerSecond = 56
	offFlags          = 67
	flagCompressed    = 1    // integers are LEB128-compressed
	stateUpdating     = 0xff // byte 64 while the JVM rewrites the header
	// maxMetadata bounds the metadata event read into memory; the JDK's is
	// about 100 KB.
	maxMetadata = 64 << 20
)

// ErrNotJFR is returned for input that does not start with a chunk header.
var ErrNotJFR = errors.New("not a JFR recording (no FLR magic)")

// ReadChunks reads every chunk header and its metadata from r, which holds
// size bytes.
func ReadChunks(r io.ReaderAt, size int64) ([]Chunk, error) {
	var out []Chunk
	for off := int64(0); off < size; {
		c, n, err := readChunk(r, off, size-off)
		if err != nil {
			return nil, fmt.Errorf("chunk at offset %d: %w", off, err)
		}
		out = append(out, c)
		off += n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty file: %w", ErrNotJFR)
	}
	return out, nil
}

// shortHeader is the error for a chunk header cut short, left bytes at
// off: bytes that do not begin as a header's magic are not a recording
// cut, but no JFR recording at all (a short text file, say).
func shortHeader(r io.ReaderAt, off, left int64) error {
	const magic = "FLR\x00"
	b := make([]byte, min(left, int64(len(magic))))
	if n, _ := r.ReadAt(b, off); n == len(b) && string(b) != magic[:n] {
		return ErrNotJFR
	}
	return fmt.Errorf("%d bytes left, a chunk header is %d: %w", left, headerSize, io.ErrUnexpectedEOF)
}

// readChunk reads the chunk at off and returns it and its size.
func readChunk(r io.ReaderAt, off, left int64) (Chunk, int64, error) {
	var h [headerSize]byte
	if left < headerSize {
		return Chunk{}, 0, shortHeader(r, off, left)
	}
	if _, err := r.ReadAt(h[:], off); err != nil {
		return Chunk{}, 0, err
	}
	if string(h[:4]) != "FLR\x00" {
		return Chunk{}, 0, ErrNotJFR
	}
	if major := binary.BigEndian.Uint16(h[4:]); major != 1 && major != 2 {
		return Chunk{}, 0, fmt.Errorf("file format %d.%d, want 1.x or 2.x", major, binary.BigEndian.Uint16(h[6:]))
	}
	if h[64] == stateUpdating {
		return Chunk{}, 0, errors.New("the JVM is still writing this chunk; read the recording after it stops")
	}
	be := func(o int) int64 { return int64(binary.BigEndian.Uint64(h[o:])) }
	size, meta := be(offChunkSize), be(offMetadata)
	if size < headerSize || size > left {
		return Chunk{}, 0, fmt.Errorf("chunk size %d outside [%d, %d]: truncated or still being written", size, headerSize, left)
	}
	if meta < headerSize || meta >= size {
		return Chunk{}, 0, fmt.Errorf("metadata offset %d outside the chunk (size %d)", meta, size)
	}
	c := Chunk{Offset: off, Start: time.Unix(0, be(offStartNanos)).UTC(), Duration: time.Duration(be(offDuration)),
		startTicks: be(offStartTicks), ticksPerSecond: be(offTicksPerSecond)}
	if c.Duration < 0 {
		return Chunk{}, 0, fmt.Errorf("negative chunk duration %d ns", c.Duration)
	}
	buf := make([]byte, min(size-meta, maxMetadata))
	if _, err := r.ReadAt(buf, off+meta); err != nil && err != io.EOF {
		return Chunk{}, 0, err
	}
	types, err := readMetadata(buf, h[offFlags]&flagCompressed != 0)
	if err != nil {
		return Chunk{}, 0, fmt.Errorf("metadata at chunk offset %d: %w", meta, err)
	}
	c.Types = types
	return c, size, nil
}

// readMetadata decodes the metadata event in b and returns the event types.
func readMetadata(b []byte, compressed bool) (map[int64]string, error) {
	m := &metaReader{b: b, compressed: compressed}
	evSize := m.long() // a long, as every event's size
	if m.err == nil && (evSize < 0 || int(evSize) > len(b)) {
		return nil, fmt.Errorf("metadata event size %d beyond the %d bytes left", evSize, len(b))
	}
	if id := m.long(); m.err == nil && id != 0 {
		return nil, fmt.Errorf("event type %d where the metadata event (type 0) should be", id)
	}
	m.long() // start time
	m.long() // duration
	m.long() // metadata id
	strs := make([]string, m.count())
	for i := range strs {
		strs[i] = m.str()
	}
	types := map[int64]string{}
	m.element(strs, types, 0)
	return types, m.err
}

// metaReader reads the metadata event's integers and strings; the first
// error sticks and later reads return zero values.
type metaReader struct {
	b          []byte
	off        int
	compressed bool
	err        error
}

func (m *metaReader) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("byte %d: "+format, append([]any{m.off}, args...)...)
	}
}

func (m *metaReader) byte() byte {
	if m.err != nil {
		return 0
	}
	if m.off >= len(m.b) {
		m.fail("%w", io.ErrUnexpectedEOF)
		return 0
	}
	c := m.b[m.off]
	m.off++
	return c
}

// long reads a compressed integer (7 bits a byte, little-endian, the ninth
// byte whole) or, in uncompressed chunks, 8 big-endian bytes.
func (m *metaReader) long() int64 {
	if !m.compressed {
		return m.raw(8)
	}
	var v uint64
	for i := 0; i < 8; i++ {
		c := m.byte()
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(v)
		}
	}
	return int64(v | uint64(m.byte())<<56)
}

func (m *metaReader) int32() int64 {
	if !m.compressed {
		return int64(int32(m.raw(4)))
	}
	return int64(int32(m.long()))
}

func (m *metaReader) raw(n int) int64 {
	var v uint64
	for range n {
		v = v<<8 | uint64(m.byte())
	}
	return int64(v)
}

// count reads a length and checks that that many items (a byte each at
// least) can follow.
func (m *metaReader) count() int {
	n := m.int32()
	if n < 0 || n > int64(len(m.b)-m.off) {
		m.fail("count %d beyond the %d bytes left", n, len(m.b)-m.off)
		return 0
	}
	return int(n)
}

// Metadata string encodings.
const (
	strNull = iota
	strEmpty
	strConstant
	strUTF8
	strChars
	strLatin1
)

func (m *metaReader) str() string {
	switch enc := m.byte(); enc {
	case strNull, strEmpty:
		return ""
	case strUTF8:
		n := m.count()
		s := string(m.b[m.off : m.off+n])
		m.off += n
		return s
	case strLatin1:
		n := m.count()
		rs := make([]rune, n)
		for i, c := range m.b[m.off : m.off+n] {
			rs[i] = rune(c)
		}
		m.off += n
		return string(rs)
	case strChars:
		n := m.count()
		rs := make([]rune, 0, n)
		for range n {
			r := rune(m.int32())
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			rs = append(rs, r)
		}
		return string(rs)
	default:
		m.fail("string encoding %d is not allowed in metadata", enc)
		return ""
	}
}

// maxDepth bounds element nesting (the JDK's metadata is 4 deep).
const maxDepth = 32

// element walks one metadata element and its children, recording classes
// whose super type is jdk.jfr.Event.
func (m *metaReader) element(strs []string, types map[int64]string, depth int) {
	if depth > maxDepth {
		m.fail("metadata nested over %d deep", maxDepth)
		return
	}
	name := m.ref(strs)
	attrs := map[string]string{}
	for range m.count() {
		k := m.ref(strs)
		attrs[k] = m.ref(strs)
	}
	if name == "class" && attrs["superType"] == "jdk.jfr.Event" {
		var id int64
		if _, err := fmt.Sscan(attrs["id"], &id); err == nil {
			types[id] = attrs["name"]
		}
	}
	for range m.count() {
		if m.err != nil {
			return
		}
		m.element(strs, types, depth+1)
	}
}

// ref reads an index into the string table.
func (m *metaReader) ref(strs []string) string {
	i := m.int32()
	if i < 0 || i >= int64(len(strs)) {
		m.fail("string index %d outside the table of %d", i, len(strs))
		return ""
	}
	return strs[i]
}
