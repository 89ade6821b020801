package tcpproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/tracelog"
)

// The log format (docs/commands.md, "proxy"), version 1. The first line is
//
//	latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=HOST:PORT delay=30ms
//
// and each further line one Event, seven fields separated by one space:
//
//	CONN DIR READ WRITTEN BYTES DELAY TRACEPARENT
//
// CONN is the connection's number from 1; DIR is to-server or to-client;
// READ and WRITTEN are CLOCK_MONOTONIC nanoseconds since boot; BYTES the
// chunk's length; DELAY the delay applied in nanoseconds; TRACEPARENT the
// W3C traceparent or "-". Header keys a reader does not know are ignored,
// so v1 may gain keys; another field layout is another version.
const (
	logMagic   = "latscope-proxy-log"
	logVersion = "v1"
	logClock   = "CLOCK_MONOTONIC"
	noTP       = "-"
)

// LogHeader is what the log's first line says.
type LogHeader struct {
	To    string        // the upstream
	Delay time.Duration // the delay configured at start
}

// A LogError is ReadLog's refusal of one line.
type LogError struct {
	Line   int // from 1; the header is line 1
	Reason string
}

func (e *LogError) Error() string {
	return fmt.Sprintf("tcpproxy: log line %d: %s", e.Line, e.Reason)
}

// LogWriter writes Events in the log format; its Log method is an
// Options.Log. Lines are buffered: Flush writes them out.
type LogWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
	err error
}

// NewLogWriter writes the header to w at once and returns a writer for the
// events.
func NewLogWriter(w io.Writer, h LogHeader) (*LogWriter, error) {
	if strings.ContainsAny(h.To, " \t\r\n") {
		return nil, fmt.Errorf("tcpproxy: log header: upstream %q has a space", h.To)
	}
	if _, err := fmt.Fprintf(w, "%s %s clock=%s to=%s delay=%v\n", logMagic, logVersion, logClock, h.To, h.Delay); err != nil {
		return nil, fmt.Errorf("tcpproxy: write log header: %w", err)
	}
	return &LogWriter{w: bufio.NewWriterSize(w, 64<<10)}, nil
}

// Log writes e as one line. It is safe for concurrent use; the first
// write error is kept for Flush and later lines are dropped.
func (l *LogWriter) Log(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	b := l.buf[:0]
	b = strconv.AppendInt(b, e.Conn, 10)
	b = append(b, ' ')
	b = append(b, e.Dir.String()...)
	for _, v := range []int64{int64(e.Read), int64(e.Written), int64(e.Bytes), int64(e.Delay)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, ' ')
	if e.TraceParent.IsValid() {
		b = tracelog.AppendTraceParent(b, e.TraceParent)
	} else {
		b = append(b, noTP...)
	}
	b = append(b, '\n')
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		l.err = fmt.Errorf("tcpproxy: write log: %w", err)
	}
}

// Flush writes the buffered lines and returns the first write error.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		if err := l.w.Flush(); err != nil {
			l.err = fmt.Errorf("tcpproxy: write log: %w", err)
		}
	}
	return l.err
}

// ReadLog parses a log written by LogWriter. An error is a *LogError naming
// the first bad line, or a read error of r.
func ReadLog(r io.Reader) (LogHeader, []Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4096)
	var h LogHeader
	var events []Event
	line := 0
	for sc.Scan() {
		line++
		var err error
		if line == 1 {
			h, err = parseLogHeader(sc.Text())
		} else {
			var e Event
			if e, err = parseLogLine(sc.Text()); err == nil {
				events = append(events, e)
			}
		}
		if err != nil {
			return LogHeader{}, nil, &LogError{Line: line, Reason: err.Error()}
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return LogHeader{}, nil, &LogError{Line: line + 1, Reason: "longer than 4096 bytes: not a proxy log"}
	case err != nil:
		return LogHeader{}, nil, fmt.Errorf("tcpproxy: read log: %w", err)
	case line == 0:
		return LogHeader{}, nil, &LogError{Line: 1, Reason: "empty: want the header " + logMagic + " " + logVersion}
	}
	return h, events, nil
}

// parseLogHeader parses the first line.
func parseLogHeader(s string) (LogHeader, error) {
	f := strings.Split(s, " ")
	switch {
	case f[0] != logMagic:
		return LogHeader{}, fmt.Errorf("want the header %q, got %q: not a proxy log", logMagic+" "+logVersion, clipText(s))
	case len(f) < 2 || f[1] != logVersion:
		v := ""
		if len(f) > 1 {
			v = f[1]
		}
		return LogHeader{}, fmt.Errorf("version %q: this reader knows %s", clipText(v), logVersion)
	}
	var h LogHeader
	seen := map[string]bool{}
	for _, kv := range f[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return LogHeader{}, fmt.Errorf("header field %q: want KEY=VALUE", clipText(kv))
		}
		if seen[k] {
			return LogHeader{}, fmt.Errorf("header key %q twice", clipText(k))
		}
		seen[k] = true
		switch k {
		case "clock":
			if v != logClock {
				return LogHeader{}, fmt.Errorf("clock %q: this reader knows %s", clipText(v), logClock)
			}
		case "to":
			h.To = v
		case "delay":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > MaxDelay {
				return LogHeader{}, fmt.Errorf("delay %q: want a duration from 0 to %v", clipText(v), MaxDelay)
			}
			h.Delay = d
		}
	}
	for _, k := range []string{"clock", "to", "delay"} {
		if !seen[k] {
			return LogHeader{}, fmt.Errorf("header lacks %s=", k)
		}
	}
	return h, nil
}

// logFields names the fields of an event line, for errors.
var logFields = [...]string{"conn", "dir", "read", "written", "bytes", "delay", "traceparent"}

// parseLogLine parses one event line.
func parseLogLine(s string) (Event, error) {
	f := strings.Split(s, " ")
	if len(f) != len(logFields) {
		return Event{}, fmt.Errorf("%d fields, want %d (%s)", len(f), len(logFields), strings.Join(logFields[:], " "))
	}
	var n [len(logFields)]int64
	for _, i := range []int{0, 2, 3, 4, 5} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 || f[i] != strconv.FormatInt(v, 10) {
			return Event{}, fmt.Errorf("%s %q: want a decimal integer, 0 or more", logFields[i], clipText(f[i]))
		}
		n[i] = v
	}
	e := Event{Conn: n[0], Read: time.Duration(n[2]), Written: time.Duration(n[3]), Bytes: int(n[4]), Delay: time.Duration(n[5])}
	switch f[1] {
	case "to-server":
		e.Dir = ToServer
	case "to-client":
		e.Dir = ToClient
	default:
		return Event{}, fmt.Errorf("dir %q: want to-server or to-client", clipText(f[1]))
	}
	switch {
	case e.Conn < 1:
		return Event{}, errors.New("conn 0: connections are numbered from 1")
	case e.Written < e.Read:
		return Event{}, fmt.Errorf("written %d before read %d", n[3], n[2])
	case e.Bytes < 1 || e.Bytes > chunkSize:
		return Event{}, fmt.Errorf("bytes %d: want 1 to %d", e.Bytes, chunkSize)
	case e.Delay > MaxDelay:
		return Event{}, fmt.Errorf("delay %d: want at most %d (%v)", n[5], int64(MaxDelay), MaxDelay)
	case e.Dir == ToServer && e.Delay != 0:
		return Event{}, fmt.Errorf("delay %d on a to-server chunk: want 0", n[5])
	}
	if f[6] != noTP {
		tp, err := tracelog.ParseTraceParent(f[6])
		if err != nil || !tp.IsValid() || tp.String() != f[6] {
			return Event{}, fmt.Errorf("traceparent %q: want 00-<32 hex>-<16 hex>-<2 hex> or -", clipText(f[6]))
		}
		e.TraceParent = tp
	}
	return e, nil
}

// clipText shortens s for an error message.
func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
