package pglog_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// line makes a jsonlog line with the given timestamp and message.
func line(ts, msg string) string {
	return `{"timestamp":"` + ts + `","pid":7,"session_id":"s.7","line_num":1,"error_severity":"LOG","message":"` + msg + `"}` + "\n"
}

var okLine = line("2026-12-02 14:07:59.176 UTC", "duration: 1.500 ms  statement: SELECT 1")

func TestReaderFields(t *testing.T) {
	in := `{"timestamp":"2026-12-02 14:07:59.176 UTC","user":"postgres","dbname":"db","pid":9384,"remote_host":"127.0.0.1",` +
		`"remote_port":5555,"session_id":"6b10263f.24a8","line_num":3,"error_severity":"LOG","state_code":"00000",` +
		`"message":"duration: 51.523 ms  statement: SELECT 1","detail":"d","application_name":"app",` +
		`"backend_type":"client backend","query_id":-42,"extra":{"nested":[1,2]}}`
	e, err := pglog.NewReader(strings.NewReader(in)).Next()
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)
	if !e.End.Equal(want) || e.PID != 9384 || e.SessionID != "6b10263f.24a8" || e.LineNum != 3 ||
		e.User != "postgres" || e.Database != "db" || e.RemoteHost != "127.0.0.1" || e.RemotePort != 5555 ||
		e.ApplicationName != "app" || e.BackendType != "client backend" || e.QueryID != -42 || e.SQLState != "00000" ||
		e.Detail != "d" || e.Duration != 51523*time.Microsecond || e.SQL != "SELECT 1" {
		t.Errorf("entry = %+v", e)
	}
}

func TestReaderTimestamps(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("SKIP: no zoneinfo for Europe/Berlin: %v", err)
	}
	tests := []struct {
		ts   string
		loc  *time.Location
		want time.Time
	}{
		{"2026-12-02 14:07:59.176 UTC", nil, time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)},
		{"2026-12-02 14:07:59.176 GMT", nil, time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)},
		{"2026-12-02 17:07:59.176 +03", nil, time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)},
		{"2026-12-02 10:37:59.176 -0330", nil, time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)},
		{"2026-12-02 19:37:59 +05:30", nil, time.Date(2026, 12, 2, 14, 7, 59, 0, time.UTC)},
		{"2026-12-02 15:07:59.176 CET", berlin, time.Date(2026, 12, 2, 14, 7, 59, 176e6, time.UTC)},
	}
	for _, tt := range tests {
		r := pglog.NewReaderOptions(strings.NewReader(line(tt.ts, "x")), pglog.Options{Location: tt.loc})
		e, err := r.Next()
		if err != nil || !e.End.Equal(tt.want) {
			t.Errorf("%s: End = %v, %v; want %v", tt.ts, e.End, err, tt.want)
		}
	}
}

func TestReaderBadLines(t *testing.T) {
	long := line("2026-12-02 14:07:59.176 UTC", strings.Repeat("x", 500))
	tests := []struct {
		name    string
		bad     string
		errText string
	}{
		{"not json", "{oops\n", "invalid character"},
		{"no timestamp", `{"pid":1}` + "\n", `no "timestamp"`},
		{"bad timestamp", line("yesterday", "x"), "timestamp"},
		{"bad zone", line("2026-12-02 14:07:59.176 +3", "x"), "bad zone"},
		{"wrong type", `{"timestamp":"2026-12-02 14:07:59.176 UTC","pid":"7"}` + "\n", "cannot unmarshal"},
		{"too long", long, "line too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := okLine + "\n" + tt.bad + okLine
			r := pglog.NewReaderOptions(strings.NewReader(in), pglog.Options{MaxLineBytes: 400})
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			_, err := r.Next()
			var lerr *pglog.LineError
			if !errors.As(err, &lerr) {
				t.Fatalf("err = %v, want a *LineError", err)
			}
			wantOff := int64(len(okLine) + 1)
			if lerr.Line != 3 || lerr.Offset != wantOff || !strings.Contains(err.Error(), tt.errText) ||
				!strings.Contains(err.Error(), "line 3 (byte offset ") {
				t.Errorf("err = %v (line %d, offset %d), want line 3, offset %d, %q", err, lerr.Line, lerr.Offset, wantOff, tt.errText)
			}
			if _, err := r.Next(); err != nil {
				t.Errorf("Next after a bad line: %v, want the next good line", err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("Next at the end: %v, want io.EOF", err)
			}
		})
	}
}

func TestReaderLenient(t *testing.T) {
	in := "garbage\n" + okLine + "{\n" + okLine + "{\"timestamp\":"
	r := pglog.NewReaderOptions(strings.NewReader(in), pglog.Options{Lenient: true})
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 || r.Skipped() != 3 {
		t.Errorf("read %d, skipped %d; want 2 and 3", n, r.Skipped())
	}
	if last := r.LastSkipped(); last == nil || last.Line != 5 || !errors.Is(last, io.ErrUnexpectedEOF) {
		t.Errorf("LastSkipped = %v, want line 5, truncated", last)
	}
}

func TestReaderLineEndings(t *testing.T) {
	in := "\n  \n" + strings.TrimSuffix(okLine, "\n") + "\r\n" + strings.TrimSuffix(okLine, "\n") // last line without newline
	r := pglog.NewReader(strings.NewReader(in))
	for i := range 2 {
		if e, err := r.Next(); err != nil || e.Duration != 1500*time.Microsecond {
			t.Fatalf("entry %d: %+v, %v", i, e, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
}

func TestReaderStickyReadError(t *testing.T) {
	boom := errors.New("boom")
	r := pglog.NewReader(io.MultiReader(strings.NewReader(okLine), iotest.ErrReader(boom)))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := r.Next()
		var lerr *pglog.LineError
		if !errors.Is(err, boom) || errors.As(err, &lerr) {
			t.Fatalf("err = %v, want the read error, not a LineError", err)
		}
	}
}

func TestReaderLongLineWithinLimit(t *testing.T) {
	sql := strings.Repeat("x", 1<<20) // 1 MiB statement: longer than the bufio buffer
	r := pglog.NewReader(strings.NewReader(line("2026-12-02 14:07:59.176 UTC", "duration: 1.000 ms  statement: "+sql)))
	e, err := r.Next()
	if err != nil || e.SQL != sql {
		t.Fatalf("long line: SQL of %d bytes, %v", len(e.SQL), err)
	}
}
