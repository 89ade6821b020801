package jfr

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// binRd reads the integers, floats and strings of a chunk. A failure panics
// with a binErr, which the chunk reader recovers into an error naming the
// byte offset; no other panic is recovered.
type binRd struct {
	b          []byte
	off        int
	compressed bool
}

// binErr is a failure at byte off of the chunk.
type binErr struct {
	off int
	err error
}

func (r *binRd) fail(format string, args ...any) {
	panic(binErr{r.off, fmt.Errorf(format, args...)})
}

func (r *binRd) eof() {
	panic(binErr{r.off, io.ErrUnexpectedEOF})
}

func (r *binRd) u8() byte {
	if r.off >= len(r.b) {
		r.eof()
	}
	c := r.b[r.off]
	r.off++
	return c
}

// raw reads n big-endian bytes.
func (r *binRd) raw(n int) uint64 {
	if r.off+n > len(r.b) {
		r.eof()
	}
	var v uint64
	for _, c := range r.b[r.off : r.off+n] {
		v = v<<8 | uint64(c)
	}
	r.off += n
	return v
}

// varint reads a compressed integer: 7 bits a byte, least significant
// first, the ninth byte whole.
func (r *binRd) varint() uint64 {
	b := r.b
	i := r.off
	if i+9 <= len(b) {
		// fast path: no bounds to check byte by byte
		var v uint64
		for s := uint(0); s < 56; s += 7 {
			c := b[i]
			i++
			v |= uint64(c&0x7f) << s
			if c < 0x80 {
				r.off = i
				return v
			}
		}
		v |= uint64(b[i]) << 56
		r.off = i + 1
		return v
	}
	var v uint64
	for s := uint(0); s < 56; s += 7 {
		c := r.u8()
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v
		}
	}
	return v | uint64(r.u8())<<56
}

// long reads a Java long.
func (r *binRd) long() int64 {
	if r.compressed {
		return int64(r.varint())
	}
	return int64(r.raw(8))
}

// int32 reads a Java int: the JDK reads a long and keeps its low 32 bits.
func (r *binRd) int32() int32 {
	if r.compressed {
		return int32(r.varint())
	}
	return int32(r.raw(4))
}

// short16 reads a Java short or char (16 bits).
func (r *binRd) short16() uint16 {
	if r.compressed {
		return uint16(r.varint())
	}
	return uint16(r.raw(2))
}

// count reads an array or string length: at most the bytes left, as the
// JDK requires.
func (r *binRd) count() int {
	n := r.int32()
	if n < 0 || int(n) > len(r.b)-r.off {
		r.fail("length %d outside [0, %d bytes left]", n, len(r.b)-r.off)
	}
	return int(n)
}

// String encodings of the format.
const (
	encNull = iota
	encEmpty
	encPool
	encUTF8
	encChars
	encLatin1
)

// skipString skips a string value.
func (r *binRd) skipString() {
	switch enc := r.u8(); enc {
	case encNull, encEmpty:
	case encPool:
		r.long()
	case encUTF8, encLatin1:
		r.off += r.count()
	case encChars:
		for range r.count() {
			r.short16()
		}
	default:
		r.off--
		r.fail("string encoding %d", enc)
	}
}

// inlineString reads a string value that is not a constant pool
// reference; pool reports enc == encPool with the key in key.
func (r *binRd) inlineString() (s string, null bool, key int64, pooled bool) {
	switch enc := r.u8(); enc {
	case encNull:
		return "", true, 0, false
	case encEmpty:
		return "", false, 0, false
	case encPool:
		return "", false, r.long(), true
	case encUTF8:
		n := r.count()
		b := r.b[r.off : r.off+n]
		r.off += n
		if utf8.Valid(b) {
			return string(b), false, 0, false
		}
		// Java's decoder replaces malformed input with U+FFFD
		return string([]rune(string(b))), false, 0, false
	case encLatin1:
		n := r.count()
		b := r.b[r.off : r.off+n]
		r.off += n
		ascii := true
		for _, c := range b {
			if c >= 0x80 {
				ascii = false
				break
			}
		}
		if ascii {
			return string(b), false, 0, false
		}
		rs := make([]rune, n)
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs), false, 0, false
	case encChars:
		n := r.count()
		u := make([]uint16, n)
		for i := range u {
			u[i] = r.short16()
		}
		return string(utf16.Decode(u)), false, 0, false
	default:
		r.off--
		r.fail("string encoding %d", enc)
		return "", true, 0, false
	}
}

// float32 reads a Java float (4 raw bytes).
func (r *binRd) float32() float32 {
	return math.Float32frombits(uint32(r.raw(4)))
}

// float64 reads a Java double (8 raw bytes).
func (r *binRd) float64() float64 {
	return math.Float64frombits(r.raw(8))
}

// float32Text returns the float64 that decode.go parses from the text `jfr
// print` writes for the float f: the shortest decimal that identifies f.
func float32Text(f float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	if err != nil {
		return float64(f)
	}
	return v
}
