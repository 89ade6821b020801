package pglog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultMaxLineBytes bounds one jsonlog line (a statement text with its
// JSON escaping); longer lines are errors (ErrLineTooLong), and the reader
// moves past them in memory bounded by the limit, newline or not.
const DefaultMaxLineBytes = 16 << 20

// Options configures a Reader. The zero value is strict, with
// DefaultMaxLineBytes and UTC.
type Options struct {
	MaxLineBytes int            // 0 = DefaultMaxLineBytes
	Lenient      bool           // skip malformed lines instead of returning them as errors; see Reader.Skipped
	Location     *time.Location // zone for named, non-UTC timestamp abbreviations; nil = UTC
	// Context, when set, stops the reader once done: every read of the
	// underlying reader (at most 64 KiB, also inside a line without end)
	// checks it first, and Next then returns an error wrapping its Err.
	// A read that blocks is for the caller to unblock (a deadline, Close).
	Context context.Context
}

// ErrLineTooLong is wrapped by the LineError of a line over MaxLineBytes.
var ErrLineTooLong = errors.New("line too long")

// LineError is a malformed line. The Reader has moved past it, so calling
// Next again continues with the next line.
type LineError struct {
	Line   int64 // 1-based line number
	Offset int64 // byte offset of the line's start
	Err    error
}

// Error names the line, its byte offset and the cause.
func (e *LineError) Error() string {
	return fmt.Sprintf("pglog: line %d (byte offset %d): %v", e.Line, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// Reader streams Entries from jsonlog text, one line at a time, in memory
// bounded by the longest line. Blank lines are skipped.
type Reader struct {
	br      *bufio.Reader
	opts    Options
	buf     []byte
	line    int64 // number of the last line read
	start   int64 // byte offset of the last line read
	off     int64 // byte offset of the next line
	err     error // sticky: io.EOF or a read error
	skipped int64
	lastErr *LineError
}

// NewReader returns a strict Reader with default Options.
func NewReader(r io.Reader) *Reader { return NewReaderOptions(r, Options{}) }

// NewReaderOptions returns a Reader configured by opts.
func NewReaderOptions(r io.Reader, opts Options) *Reader {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Context != nil {
		r = ctxReader{opts.Context, r}
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), opts: opts}
}

// ctxReader is r, until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// MaxLineBytes is the longest line the reader decodes.
func (r *Reader) MaxLineBytes() int { return r.opts.MaxLineBytes }

// Next returns the next entry; io.EOF after the last. A malformed line is
// a *LineError (and, in Lenient mode, skipped and counted instead); the
// caller may call Next again to go on. A read error from the underlying
// reader is returned again on every later call.
func (r *Reader) Next() (Entry, error) {
	for {
		e, err := r.next()
		if err == nil || err == r.err {
			return e, err
		}
		lerr := &LineError{Line: r.line, Offset: r.start, Err: err}
		if !r.opts.Lenient {
			return Entry{}, lerr
		}
		r.skipped++
		r.lastErr = lerr
	}
}

// next reads and decodes the next non-blank line. It returns r.err at the
// end and any other error for the line just read.
func (r *Reader) next() (Entry, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Entry{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := r.decode(line)
		if err != nil && r.err == io.EOF {
			err = fmt.Errorf("%w (last line has no newline: %w)", err, io.ErrUnexpectedEOF)
		}
		return e, err
	}
}

// Skipped returns how many malformed lines a Lenient reader has skipped.
func (r *Reader) Skipped() int64 { return r.skipped }

// LastSkipped returns the most recent skipped line's error, or nil.
func (r *Reader) LastSkipped() *LineError { return r.lastErr }

// readLine returns the next line without its line ending and sets r.start
// to its byte offset. A line over MaxLineBytes is consumed and reported as
// ErrLineTooLong. At the end it returns r.err.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.start = r.off
	tooLong := false
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.off += int64(len(chunk))
		if !tooLong && len(r.buf)+len(chunk) > r.opts.MaxLineBytes+2 { // +2: "\r\n"
			tooLong, r.buf = true, r.buf[:0]
		}
		if !tooLong {
			r.buf = append(r.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			r.err = fmt.Errorf("pglog: reading after line %d (byte offset %d): %w", r.line, r.off, err)
			return nil, r.err
		}
		if err == io.EOF {
			r.err = io.EOF
			if r.off == r.start {
				return nil, io.EOF
			}
		}
		break
	}
	r.line++
	if tooLong {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, r.opts.MaxLineBytes)
	}
	return bytes.TrimRight(r.buf, "\r\n"), nil
}

// rawEntry is the JSON form of a line; fields not listed are ignored.
type rawEntry struct {
	Timestamp       string `json:"timestamp"`
	User            string `json:"user"`
	DBName          string `json:"dbname"`
	PID             int    `json:"pid"`
	RemoteHost      string `json:"remote_host"`
	RemotePort      int    `json:"remote_port"`
	SessionID       string `json:"session_id"`
	LineNum         int64  `json:"line_num"`
	ErrorSeverity   string `json:"error_severity"`
	StateCode       string `json:"state_code"`
	Message         string `json:"message"`
	Detail          string `json:"detail"`
	Statement       string `json:"statement"`
	ApplicationName string `json:"application_name"`
	BackendType     string `json:"backend_type"`
	QueryID         int64  `json:"query_id"`
}

// decode parses one line.
func (r *Reader) decode(line []byte) (Entry, error) {
	var raw rawEntry
	if err := json.Unmarshal(line, &raw); err != nil {
		return Entry{}, err
	}
	if raw.Timestamp == "" {
		return Entry{}, errors.New(`no "timestamp"`)
	}
	end, err := parseTimestamp(raw.Timestamp, r.opts.Location)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{
		End: end, PID: raw.PID, SessionID: raw.SessionID, LineNum: raw.LineNum,
		Severity: raw.ErrorSeverity, SQLState: raw.StateCode,
		Message: raw.Message, Detail: raw.Detail, Statement: raw.Statement,
		User: raw.User, Database: raw.DBName, RemoteHost: raw.RemoteHost, RemotePort: raw.RemotePort,
		ApplicationName: raw.ApplicationName, BackendType: raw.BackendType, QueryID: raw.QueryID,
	}
	e.parseMessage()
	return e, nil
}

// timestampLayout is jsonlog's "2026-12-02 14:07:59.176" before the zone.
const timestampLayout = "2006-01-02 15:04:05.999999999"

// parseTimestamp parses "<date> <time> <zone>". UTC, GMT and numeric zones
// ("+03", "-0330", "+05:30") are exact; other abbreviations are resolved in
// loc as time.ParseInLocation does (offset 0 if loc does not use them).
func parseTimestamp(s string, loc *time.Location) (time.Time, error) {
	i := strings.LastIndexByte(s, ' ')
	if i < 0 {
		return time.Time{}, fmt.Errorf("timestamp %q has no zone", s)
	}
	dt, zone := s[:i], s[i+1:]
	var t time.Time
	var err error
	switch {
	case zone == "UTC" || zone == "GMT":
		t, err = time.ParseInLocation(timestampLayout, dt, time.UTC)
	case zone != "" && (zone[0] == '+' || zone[0] == '-'):
		var z *time.Location
		if z, err = numericZone(zone); err == nil {
			t, err = time.ParseInLocation(timestampLayout, dt, z)
		}
	default:
		t, err = time.ParseInLocation(timestampLayout+" MST", s, loc)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return t, nil
}

// numericZone parses "+HH", "-HHMM" and "+HH:MM".
func numericZone(z string) (*time.Location, error) {
	digits := strings.ReplaceAll(z[1:], ":", "")
	if !allDigits(digits) || (len(digits) != 2 && len(digits) != 4) {
		return nil, fmt.Errorf("bad zone %q", z)
	}
	h := int(digits[0]-'0')*10 + int(digits[1]-'0')
	m := 0
	if len(digits) == 4 {
		m = int(digits[2]-'0')*10 + int(digits[3]-'0')
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone(z, off), nil
}
