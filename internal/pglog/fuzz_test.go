package pglog_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/pglog"
)

// seedLines adds each line of the captured log to f, and one session's
// statements (lines 7–12: a simple query, then parse, bind and execute) as
// one seed. Not the whole log: 18 kB kept the fuzzing engine busy
// minimising it instead of fuzzing.
func seedLines(f *testing.F, add func(string)) {
	log, err := os.ReadFile(captureFile)
	if err != nil {
		f.Fatal(err)
	}
	var lines []string
	for line := range bytes.Lines(log) {
		add(string(line))
		lines = append(lines, string(line))
	}
	if len(lines) < 12 {
		f.Fatalf("%s: %d lines, want at least 12", captureFile, len(lines))
	}
	add(strings.Join(lines[6:12], ""))
}

func FuzzReader(f *testing.F) {
	seedLines(f, func(s string) { f.Add([]byte(s)) })
	for _, s := range []string{"", "\n", "{}\n", "{\n", `{"timestamp":"2026-12-02 14:07:59.176 +05:30","pid":1,"message":"duration: 1.0 ms"}`,
		"\xff\xfe\n", okLine + okLine[:40]} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := pglog.NewReaderOptions(bytes.NewReader(data), pglog.Options{MaxLineBytes: 4096})
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			var lerr *pglog.LineError
			if errors.As(err, &lerr) {
				if lerr.Line < 1 || lerr.Offset < 0 || lerr.Offset > int64(len(data)) {
					t.Fatalf("LineError position line %d offset %d of %d bytes", lerr.Line, lerr.Offset, len(data))
				}
				continue
			}
			if err != nil {
				t.Fatalf("non-line error from a bytes.Reader: %v", err)
			}
			if e.Duration < 0 || e.LockWait < 0 || (!e.HasDuration && e.Duration != 0) {
				t.Fatalf("bad durations: %+v", e)
			}
		}
		lenient := pglog.NewReaderOptions(bytes.NewReader(data), pglog.Options{Lenient: true, MaxLineBytes: 4096})
		err := pglog.Statements(lenient, func(s pglog.Statement) {
			if s.Phases < 1 || s.Duration < 0 || s.Start.After(s.End) || s.PID == 0 {
				t.Fatalf("bad statement: %+v", s)
			}
		})
		if err != nil {
			t.Fatalf("lenient Statements: %v", err)
		}
	})
}

func FuzzFindTraceParent(f *testing.F) {
	seedLines(f, func(s string) { f.Add(s) })
	for _, s := range []string{
		"/*traceparent='" + validTP + "'*/ SELECT 1",
		"SELECT 1 /*a='b',traceparent='00%2D0af7651916cd43dd8448eb211c80319c%2Db7ad6b7169203331%2D01'*/",
		"/* traceparent = \"" + validTP + "\" */", "/*traceparent=", "/**/", "/*", "*/", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if tp, ok := pglog.FindTraceParent(sql); ok {
			if !tp.IsValid() {
				t.Fatalf("found an invalid traceparent %+v", tp)
			}
			back, err := pglog.ParseTraceParent(tp.String())
			if err != nil || back != tp {
				t.Fatalf("String/Parse round trip: %v, %v", back, err)
			}
		}
		want, _ := pglog.ParseTraceParent(validTP)
		commented := pglog.Comment(want, sql, sql, "k", sql) + " " + sql
		if got, ok := pglog.FindTraceParent(commented); !ok || got != want {
			t.Fatalf("FindTraceParent(%q) = %v, %v; want %v", commented, got, ok, want)
		}
	})
}
