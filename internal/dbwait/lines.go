package dbwait

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads lines of at most max bytes, keeping their numbers and
// byte offsets; a longer line is read to its end without being kept, so
// memory is bounded by max whatever the input (a line without end is read
// until the input ends or fails).
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// quotes counts the '"' of the last line, kept or not (a CSV
	// record's end depends on them).
	quotes int
	// stop: a line over max is returned as soon as it is (long, its end
	// not read), for a caller that refuses it.
	stop  bool
	line  int   // number of the last line read, from 1
	start int64 // byte offset of the last line read
	off   int64 // byte offset of the next line
}

func newLineReader(br *bufio.Reader, max int) *lineReader {
	return &lineReader{br: br, max: max}
}

// next returns the next line with its '\n' (none at the end of the
// input), valid until the next call, or long=true and no bytes for a line
// over max. At the end it returns io.EOF, and any read error as it is.
func (l *lineReader) next() (line []byte, long bool, err error) {
	l.start, l.buf, l.quotes = l.off, l.buf[:0], 0
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.off += int64(len(chunk))
		l.quotes += bytes.Count(chunk, []byte{'"'})
		if !long && len(l.buf)+len(chunk) > l.max {
			long, l.buf = true, l.buf[:0]
			if l.stop {
				l.line++
				return nil, true, nil
			}
		}
		if !long {
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && l.off > l.start:
			l.line++
			return l.buf, long, nil
		case err != nil:
			return nil, false, err
		}
		l.line++
		return l.buf, long, nil
	}
}

// trimEOL cuts a line's "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
