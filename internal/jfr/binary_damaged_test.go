package jfr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The tests below damage copies of the kept recording testdata/rec/lib.jfr (one chunk, a
// real JVM's): a few bytes of the chunk header or of its last checkpoint are rewritten, and
// the readers must fail with one line naming the file, the byte and the chunk.

// keptLib returns the bytes of the kept recording lib.jfr and where its last checkpoint is.
func keptLib(t *testing.T) (data []byte, cpPos int) {
	t.Helper()
	data, err := os.ReadFile("testdata/rec/lib.jfr")
	if err != nil {
		t.Fatal(err)
	}
	if int64(binary.BigEndian.Uint64(data[offChunkSize:])) != int64(len(data)) || data[offFlags]&flagCompressed == 0 {
		t.Fatal("lib.jfr is no longer one chunk with compressed integers: choose another kept recording for these tests")
	}
	return data, int(binary.BigEndian.Uint64(data[16:]))
}

// writeCopy writes data to a file named name in a new temporary directory.
func writeCopy(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll reads every event of the recording at path with the binary reader.
func readAll(path string) (int, error) {
	n := 0
	err := ReadBinary(context.Background(), path, PrintOptions{StackDepth: 1}, func(*Event) error {
		n++
		return nil
	})
	return n, err
}

// varField is where a compressed integer sits in a chunk, and its value.
type varField struct {
	off, width int
	v          int64
}

// checkpointFields walks the checkpoint event at pos as the reader does and returns where
// its size, delta, pool count, first pool's type and that pool's constant count are.
func checkpointFields(b []byte, pos int) (size, delta, pools, typ, consts varField) {
	r := &binRd{b: b, off: pos, compressed: true}
	at := func() varField {
		o := r.off
		v := r.long()
		return varField{o, r.off - o, v}
	}
	size = at()
	r.long() // type 1
	r.long() // start
	r.long() // duration
	delta = at()
	r.u8() // kind
	pools, typ, consts = at(), at(), at()
	return
}

// putVarint rewrites the compressed integer f with v in exactly f.width bytes: the reader
// takes a longer form than the JVM's shortest as the same value, so the bytes around it do
// not move.
func putVarint(t *testing.T, b []byte, f varField, v int64) {
	t.Helper()
	u := uint64(v)
	if f.width < 9 && u >= 1<<(7*f.width) {
		t.Fatalf("%d does not fit the %d bytes at %d", v, f.width, f.off)
	}
	for i := range f.width - 1 {
		b[f.off+i] = byte(u&0x7f) | 0x80
		u >>= 7
	}
	b[f.off+f.width-1] = byte(u)
}

// TestReadBinaryDamagedHeader: a header the reader cannot trust stops it at once, naming
// the field's byte; ReadRecording, which reads only headers and metadata, says the same.
func TestReadBinaryDamagedHeader(t *testing.T) {
	t.Parallel()
	good, _ := keptLib(t)
	size := len(good)
	tests := []struct {
		name       string
		damage     func(b []byte) []byte
		binary     string // ReadBinary's error, after "PATH: "
		recording  string // ReadRecording's, after "PATH: "
		unexpected bool   // the error wraps io.ErrUnexpectedEOF
	}{
		{"format 3.1", func(b []byte) []byte { binary.BigEndian.PutUint16(b[4:], 3); return b },
			"byte 4: chunk at 0: file format 3.1, want 1.x or 2.x", "chunk at offset 0: file format 3.1, want 1.x or 2.x", false},
		{"being written", func(b []byte) []byte { b[64] = stateUpdating; return b },
			"byte 64: chunk at 0: the JVM is still writing this chunk; read the recording after it stops",
			"chunk at offset 0: the JVM is still writing this chunk; read the recording after it stops", false},
		{"metadata past the end", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offMetadata:], uint64(size)); return b },
			fmt.Sprintf("byte 24: chunk at 0: metadata offset %d outside the chunk (size %d)", size, size),
			fmt.Sprintf("chunk at offset 0: metadata offset %d outside the chunk (size %d)", size, size), false},
		{"constant pools inside the header", func(b []byte) []byte { binary.BigEndian.PutUint64(b[16:], 8); return b },
			fmt.Sprintf("byte 16: chunk at 0: constant pool offset 8 outside the chunk (size %d)", size), "", false},
		{"a second chunk cut in its header", func(b []byte) []byte { return append(b, good[:40]...) },
			fmt.Sprintf("byte %d: chunk at %d: 40 bytes left, a chunk header is 68: unexpected EOF", size, size),
			fmt.Sprintf("chunk at offset %d: 40 bytes left, a chunk header is 68: unexpected EOF", size), true},
		{"cut short", func(b []byte) []byte { return b[:size-1] },
			fmt.Sprintf("byte 8: chunk at 0: chunk size %d outside [68, %d]: truncated or still being written", size, size-1),
			fmt.Sprintf("chunk at offset 0: chunk size %d outside [68, %d]: truncated or still being written", size, size-1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeCopy(t, "lib.jfr", tt.damage(append([]byte{}, good...)))
			n, err := readAll(path)
			if err == nil || err.Error() != path+": "+tt.binary {
				t.Errorf("ReadBinary after %d events: %v\nwant %s: %s", n, err, path, tt.binary)
			}
			if tt.unexpected != errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("ReadBinary: errors.Is(%v, io.ErrUnexpectedEOF) = %v", err, !tt.unexpected)
			}
			if tt.recording == "" {
				return // ReadRecording does not read the constant pools
			}
			if _, err := ReadRecording(path); err == nil || err.Error() != path+": "+tt.recording {
				t.Errorf("ReadRecording: %v\nwant %s: %s", err, path, tt.recording)
			}
		})
	}
}

// TestReadBinaryDamagedCheckpoint rewrites one integer of the last checkpoint (the start of
// the chain of constant pools) at a time, keeping its length.
func TestReadBinaryDamagedCheckpoint(t *testing.T) {
	t.Parallel()
	good, cpPos := keptLib(t)
	size, delta, pools, typ, consts := checkpointFields(good, cpPos)
	if delta.width != 9 || pools.v < 1 {
		t.Fatalf("lib.jfr's last checkpoint: delta %+v, %d pools; want a delta back to an earlier one (9 bytes) and a pool", delta, pools.v)
	}
	meta, err := parseMetadata(good[binary.BigEndian.Uint64(good[offMetadata:]):], true)
	if err != nil {
		t.Fatal(err)
	}
	poolType := meta.types[typ.v]
	undefined := int64(1)<<(7*typ.width) - 1
	if poolType == nil || meta.types[undefined] != nil {
		t.Fatalf("pool type %d (%v), type %d (%v): want the first defined and the second not", typ.v, poolType, undefined, meta.types[undefined])
	}
	end := cpPos + int(size.v) // where the reader stands after the checkpoint
	tests := []struct {
		name  string
		field varField
		v     int64
		at    int // the byte the error names
		want  string
	}{
		{"size past the chunk", size, int64(len(good)-cpPos) + 1, size.off + size.width,
			fmt.Sprintf("checkpoint size %d outside (0, %d]", len(good)-cpPos+1, len(good)-cpPos)},
		{"delta out of the chunk", delta, 1 << 40, end, "checkpoint delta 1099511627776 leaves the chunk"},
		{"delta into the header", delta, int64(10 - cpPos), end, "checkpoint chain reaches offset 10"},
		{"no pools", pools, 0, pools.off + pools.width, fmt.Sprintf("checkpoint at %d is %d bytes, its pools %d", cpPos, size.v, pools.off+pools.width-cpPos)},
		{"pool of an undefined type", typ, undefined, typ.off + typ.width,
			fmt.Sprintf("constant pool of type %d, which the metadata does not define", undefined)},
		{"more constants than bytes", consts, 1<<(7*consts.width) - 1, consts.off + consts.width,
			fmt.Sprintf("%d constants of %s", 1<<(7*consts.width)-1, poolType.name)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := append([]byte{}, good...)
			putVarint(t, b, tt.field, tt.v)
			path := writeCopy(t, "lib.jfr", b)
			n, err := readAll(path)
			want := fmt.Sprintf("%s: byte %d: chunk at 0: %s", path, tt.at, tt.want)
			if err == nil || err.Error() != want || n != 0 {
				t.Errorf("after %d events: %v\nwant %s", n, err, want)
			}
		})
	}
	// the same rewrite with the value it had is no damage: the longer forms read the same
	b := append([]byte{}, good...)
	putVarint(t, b, varField{off: size.off, width: size.width}, size.v)
	n, err := readAll(writeCopy(t, "lib.jfr", b))
	m, err2 := readAll("testdata/rec/lib.jfr")
	if err != nil || err2 != nil || n != m || n == 0 {
		t.Errorf("undamaged copy: %d events (%v), the kept recording %d (%v)", n, err, m, err2)
	}
}

// TestReadBinaryStops: a missing file is the open error; a cancelled context stops the read
// before the first chunk, or within 4096 events of a chunk once it is under way (burst.jfr:
// one chunk of more than 4096 events).
func TestReadBinaryStops(t *testing.T) {
	t.Parallel()
	_, err := readAll(filepath.Join(t.TempDir(), "none.jfr"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadRecording(filepath.Join(t.TempDir(), "none.jfr")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadRecording of a missing file: %v, want fs.ErrNotExist", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	err = ReadBinary(ctx, "testdata/rec/lib.jfr", PrintOptions{StackDepth: 1}, func(*Event) error { n++; return nil })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled before: %v after %d events", err, n)
	}

	total, err := readAll("testdata/rec/burst.jfr")
	if err != nil || total < 4096 {
		t.Fatalf("burst.jfr: %d events, %v; the test needs a chunk of 4096 at least", total, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n = 0
	err = ReadBinary(ctx, "testdata/rec/burst.jfr", PrintOptions{StackDepth: 1}, func(*Event) error {
		n++
		cancel() // at the first event
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 4095 {
		t.Errorf("cancelled at the first of %d events: %v after %d, want context.Canceled after 4095", total, err, n)
	}
}

// TestJavaLong: ticks become nanoseconds through a double, cast as Java casts it: NaN is 0
// and values out of range saturate instead of wrapping.
func TestJavaLong(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		x    float64
		want int64
	}{
		{math.NaN(), 0},
		{math.Inf(1), math.MaxInt64},
		{1e19, math.MaxInt64},
		{math.Inf(-1), math.MinInt64},
		{-1e19, math.MinInt64},
		{-2.9, -2},
		{1234567.9, 1234567},
	} {
		if got := javaLong(tt.x); got != tt.want {
			t.Errorf("javaLong(%g) = %d, want %d", tt.x, got, tt.want)
		}
	}
	// a clock whose divisor is 0 (a header with 0 ticks per second) does not wrap
	c := binClock{startTicks: 10, startNanos: 5, divisor: 0}
	if got := c.span(1); got != math.MaxInt64 {
		t.Errorf("span with a zero divisor = %d, want the largest", got)
	}
}
