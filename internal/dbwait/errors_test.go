package dbwait_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// record returns a real execution trace of fn, run in this process.
func record(t *testing.T, fn func(ctx context.Context)) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := trace.Start(&b); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	fn(context.Background())
	trace.Stop()
	return b.Bytes()
}

// finalize joins a trace with a log.
func finalize(t *testing.T, tr, log []byte, opts dbwait.Options) (*dbwait.Result, error) {
	t.Helper()
	a := dbwait.New(opts)
	feedTrace(t, a, "trace", tr)
	if err := dbwait.FeedPGLog(a, pglog.NewReader(bytes.NewReader(log))); err != nil {
		t.Fatal(err)
	}
	return a.Finalize()
}

func TestNoSpans(t *testing.T) {
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name string
		fn   func(ctx context.Context)
		want string
	}{
		{"nothing", func(ctx context.Context) {}, "no region holds a latscope.sql log"},
		{"db region without a log", func(ctx context.Context) { trace.StartRegion(ctx, "db").End() }, `1 "db" regions without a traceparent logged inside`},
		{"log outside a region", func(ctx context.Context) { trace.Log(ctx, dbwait.SQLLogCategory, tp) }, "1 latscope.sql logs outside any region"},
		{"log that is no traceparent", func(ctx context.Context) {
			defer trace.StartRegion(ctx, "sql").End()
			trace.Log(ctx, dbwait.SQLLogCategory, "req-42")
		}, "are not traceparents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := finalize(t, record(t, tc.fn), nil, dbwait.Options{})
			if !errors.Is(err, dbwait.ErrNoSpans) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "trace.StartRegion") {
				t.Errorf("err = %v, want ErrNoSpans saying %q and how to add spans", err, tc.want)
			}
		})
	}
}

func TestNoMatch(t *testing.T) {
	base := loadCapture(t, "baseline")
	_, err := finalize(t, base.trace, loadCapture(t, "proxy").pglog, dbwait.Options{})
	if !errors.Is(err, dbwait.ErrNoMatch) || !strings.Contains(err.Error(), "another server or another time") {
		t.Errorf("another run's log: err = %v, want ErrNoMatch naming another server", err)
	}
	_, err = finalize(t, base.trace, stripComments(t, base.pglog), dbwait.Options{})
	if !errors.Is(err, dbwait.ErrNoMatch) || !strings.Contains(err.Error(), "carries no traceparent comment") {
		t.Errorf("a log without comments: err = %v, want ErrNoMatch naming the missing comment", err)
	}
}

// stripComments removes the sqlcommenter comments from a jsonlog.
func stripComments(t *testing.T, log []byte) []byte {
	return editLog(t, log, func(m map[string]any) {
		for _, k := range []string{"message", "statement"} {
			if s, ok := m[k].(string); ok {
				if i := strings.Index(s, "/*"); i >= 0 {
					if j := strings.Index(s[i:], "*/"); j >= 0 {
						m[k] = s[:i] + s[i+j+2:]
					}
				}
			}
		}
	})
}

// editLog rewrites every jsonlog line with fn.
func editLog(t *testing.T, log []byte, fn func(map[string]any)) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		b, _ := json.Marshal(m)
		out.Write(append(b, '\n'))
	}
	return out.Bytes()
}

// TestClockMismatch: a database host 3 s ahead makes every statement lie
// outside its span; the error names the offset, and passing it fixes the
// join.
func TestClockMismatch(t *testing.T) {
	const skew = 3 * time.Second
	c := loadCapture(t, "pause")
	shifted := editLog(t, c.pglog, func(m map[string]any) {
		ts, err := time.Parse("2006-01-02 15:04:05.000 MST", m["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		m["timestamp"] = ts.Add(skew).Format("2006-01-02 15:04:05.000 MST")
	})
	_, err := finalize(t, c.trace, shifted, dbwait.Options{})
	if !errors.Is(err, dbwait.ErrClockMismatch) || !strings.Contains(err.Error(), "(pg-clock-offset 2.99") && !strings.Contains(err.Error(), "(pg-clock-offset 3") {
		t.Fatalf("err = %v, want ErrClockMismatch suggesting the option pg-clock-offset ≈ 3s", err)
	}
	r, err := finalize(t, c.trace, shifted, dbwait.Options{PGClockOffset: skew})
	if err != nil {
		t.Fatal(err)
	}
	want := analyse(t, "pause", dbwait.Options{})
	checkInvariants(t, r)
	for i, q := range r.Queries {
		if q.Verdict != want.Queries[i].Verdict {
			t.Errorf("query %d: %v with the offset given, %v on the true clock", i, q.Verdict, want.Queries[i].Verdict)
		}
	}
}

// TestNoClock: a log without times (MySQL's export without END_TIME) is
// joined and compared, but not placed; the paused rule then looks at the
// whole span and still finds the stop.
func TestNoClock(t *testing.T) {
	c := loadCapture(t, "pause")
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "pause", c.trace)
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) {
		s.Start, s.End = time.Time{}, time.Time{}
		a.Statement(s)
	})
	r, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	q := longest(r, func(q dbwait.Query) time.Duration { return q.Outside })
	if q.Evidence.Placed || q.Verdict != dbwait.Paused || !q.DBStart.IsZero() {
		t.Errorf("placed %v, verdict %v, DB start %v: want not placed, paused, no DB time", q.Evidence.Placed, q.Verdict, q.DBStart)
	}
}
