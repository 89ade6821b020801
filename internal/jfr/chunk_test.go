package jfr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chunkSpec describes a synthetic chunk.
type chunkSpec struct {
	start      time.Time
	dur        time.Duration
	types      map[int64]string
	compressed bool
	strEnc     byte // string encoding for the metadata's strings (strUTF8 by default)
}

// metaWriter writes metadata integers as the chunk's flag says.
type metaWriter struct {
	bytes.Buffer
	compressed bool
}

func (w *metaWriter) long(v int64) {
	if !w.compressed {
		binary.Write(&w.Buffer, binary.BigEndian, v)
		return
	}
	u := uint64(v)
	for i := 0; i < 8; i++ {
		if u < 0x80 {
			w.WriteByte(byte(u))
			return
		}
		w.WriteByte(byte(u) | 0x80)
		u >>= 7
	}
	w.WriteByte(byte(u))
}

func (w *metaWriter) int(v int) {
	if !w.compressed {
		binary.Write(&w.Buffer, binary.BigEndian, int32(v))
		return
	}
	w.long(int64(int32(v)))
}

// build returns the bytes of a chunk: header, a few filler bytes standing
// in for events, and the metadata event.
func (c chunkSpec) build() []byte {
	strs := []string{"root", "metadata", "class", "name", "id", "superType", "jdk.jfr.Event", "java.lang.String"}
	index := func(s string) int {
		for i, x := range strs {
			if x == s {
				return i
			}
		}
		strs = append(strs, s)
		return len(strs) - 1
	}
	type class struct{ name, id, super int }
	var classes []class
	classes = append(classes, class{index("java.lang.String"), index("20"), -1})
	for id, name := range c.types {
		classes = append(classes, class{index(name), index(strconv.FormatInt(id, 10)), index("jdk.jfr.Event")})
	}
	body := &metaWriter{compressed: c.compressed}
	body.long(0) // metadata type
	body.long(c.start.UnixNano())
	body.long(0)
	body.long(1)
	body.int(len(strs))
	for _, s := range strs {
		enc := c.strEnc
		if enc == 0 {
			enc = strUTF8
		}
		body.WriteByte(enc)
		switch enc {
		case strChars:
			body.int(len([]rune(s)))
			for _, r := range s {
				body.int(int(r))
			}
		default:
			body.int(len(s))
			body.WriteString(s)
		}
	}
	body.int(index("root"))
	body.int(0)
	body.int(1)
	body.int(index("metadata"))
	body.int(0)
	body.int(len(classes))
	for _, cl := range classes {
		body.int(index("class"))
		if cl.super < 0 {
			body.int(2)
		} else {
			body.int(3)
		}
		body.int(index("name"))
		body.int(cl.name)
		body.int(index("id"))
		body.int(cl.id)
		if cl.super >= 0 {
			body.int(index("superType"))
			body.int(cl.super)
		}
		body.int(0)
	}
	// the event's size counts the size field itself
	meta := &metaWriter{compressed: c.compressed}
	for n := body.Len() + 1; ; n++ {
		meta.Reset()
		meta.long(int64(n))
		if meta.Len()+body.Len() == n {
			break
		}
	}
	meta.Write(body.Bytes())

	filler := []byte("events...")
	h := make([]byte, headerSize)
	copy(h, "FLR\x00")
	binary.BigEndian.PutUint16(h[4:], 2)
	binary.BigEndian.PutUint16(h[6:], 1)
	size := headerSize + len(filler) + meta.Len()
	binary.BigEndian.PutUint64(h[offChunkSize:], uint64(size))
	binary.BigEndian.PutUint64(h[16:], uint64(headerSize))
	binary.BigEndian.PutUint64(h[offMetadata:], uint64(headerSize+len(filler)))
	binary.BigEndian.PutUint64(h[offStartNanos:], uint64(c.start.UnixNano()))
	binary.BigEndian.PutUint64(h[offDuration:], uint64(c.dur))
	binary.BigEndian.PutUint64(h[56:], 1e9)
	if c.compressed {
		h[offFlags] = flagCompressed | 2
	}
	return append(append(h, filler...), meta.Bytes()...)
}

var (
	t0       = time.Date(2026, 12, 2, 14, 9, 40, 123456789, time.UTC)
	twoTypes = map[int64]string{1337: "jdk.SocketRead", 5: "jdk.ThreadPark"}
)

func TestReadChunks(t *testing.T) {
	one := chunkSpec{start: t0, dur: 30 * time.Second, types: twoTypes, compressed: true}.build()
	two := chunkSpec{start: t0.Add(30 * time.Second), dur: 10 * time.Second, types: map[int64]string{7: "jdk.JavaMonitorWait"}, compressed: true}.build()
	tests := []struct {
		name  string
		data  []byte
		start time.Time
		end   time.Time
		types map[int64]string
	}{
		{"one chunk", one, t0, t0.Add(30 * time.Second), twoTypes},
		{"two chunks", append(append([]byte{}, one...), two...), t0, t0.Add(40 * time.Second), map[int64]string{1337: "jdk.SocketRead", 7: "jdk.JavaMonitorWait"}},
		{"uncompressed", chunkSpec{start: t0, dur: time.Second, types: twoTypes}.build(), t0, t0.Add(time.Second), twoTypes},
		{"char-array strings", chunkSpec{start: t0, dur: time.Second, types: twoTypes, compressed: true, strEnc: strChars}.build(), t0, t0.Add(time.Second), twoTypes},
		{"latin1 strings", chunkSpec{start: t0, dur: time.Second, types: twoTypes, compressed: true, strEnc: strLatin1}.build(), t0, t0.Add(time.Second), twoTypes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := ReadChunks(bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			r := &Recording{Chunks: cs}
			if !r.Start().Equal(tt.start) || !r.End().Equal(tt.end) {
				t.Errorf("window %v – %v, want %v – %v", r.Start(), r.End(), tt.start, tt.end)
			}
			for id, name := range tt.types {
				if got := r.TypeName(id); got != name {
					t.Errorf("TypeName(%d) = %q, want %q", id, got, name)
				}
			}
			if got := r.TypeName(20); got != "" {
				t.Errorf("TypeName(20) = %q: java.lang.String is not an event type", got)
			}
		})
	}
}

func TestReadChunksErrors(t *testing.T) {
	good := chunkSpec{start: t0, dur: time.Second, types: twoTypes, compressed: true}.build()
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"not jfr", []byte(strings.Repeat("hello, world! ", 10)), "no FLR magic"},
		{"short header", good[:40], "a chunk header is 68"},
		{"short, not jfr", []byte("hello world\n"), "not a JFR recording (no FLR magic)"},
		{"three bytes of magic", good[:3], "3 bytes left, a chunk header is 68"},
		{"version 3", mod(func(b []byte) []byte { b[5] = 3; return b }), "file format 3.1"},
		{"being written", mod(func(b []byte) []byte { b[64] = 0xff; return b }), "still writing"},
		{"truncated", good[:len(good)-10], "truncated or still being written"},
		{"metadata outside", mod(func(b []byte) []byte { binary.BigEndian.PutUint64(b[offMetadata:], 1<<40); return b }), "metadata offset"},
		{"negative duration", mod(func(b []byte) []byte { binary.BigEndian.PutUint64(b[offDuration:], 1<<63); return b }), "negative chunk duration"},
		{"not metadata", mod(func(b []byte) []byte { b[headerSize+len("events...")+2] = 9; return b }), "metadata event (type 0)"},
		{"trailing garbage", append(append([]byte{}, good...), "xyz"...), "offset " + strconv.Itoa(len(good))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadChunks(bytes.NewReader(tt.data), int64(len(tt.data)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := ReadChunks(bytes.NewReader([]byte("nope")), 4); !errors.Is(err, ErrNotJFR) && !strings.Contains(err.Error(), "header") {
		t.Errorf("4 bytes: %v", err)
	}
}

func FuzzReadChunks(f *testing.F) {
	f.Add(chunkSpec{start: t0, dur: time.Second, types: twoTypes, compressed: true}.build())
	f.Add(chunkSpec{start: t0, dur: time.Second, types: twoTypes}.build())
	f.Add(chunkSpec{start: t0, dur: time.Second, types: twoTypes, compressed: true, strEnc: strChars}.build())
	f.Add([]byte("FLR\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ReadChunks(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var sum int64
		for _, c := range cs {
			if c.Duration < 0 || c.Offset != sum {
				t.Fatalf("chunk %+v after %d bytes", c, sum)
			}
			sum += int64(binary.BigEndian.Uint64(data[c.Offset+offChunkSize:]))
		}
		if sum != int64(len(data)) {
			t.Fatalf("chunks cover %d of %d bytes", sum, len(data))
		}
	})
}
