package pglog_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// ln is one synthetic log line.
type ln struct {
	pid    int
	ms     int // timestamp: milliseconds after base
	sev    string
	msg    string
	detail string
	stmt   string
}

var base = time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)

// jsonlog renders lines as jsonlog text.
func jsonlog(lines []ln) string {
	var b strings.Builder
	for i, l := range lines {
		sev := l.sev
		if sev == "" {
			sev = "LOG"
		}
		m := map[string]any{
			"timestamp": base.Add(time.Duration(l.ms)*time.Millisecond).Format("2006-01-02 15:04:05.000") + " UTC",
			"pid":       l.pid, "session_id": fmt.Sprintf("s.%d", l.pid), "line_num": i + 1,
			"error_severity": sev, "message": l.msg,
		}
		if l.detail != "" {
			m["detail"] = l.detail
		}
		if l.stmt != "" {
			m["statement"] = l.stmt
		}
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// stmtDump is the part of a Statement the table compares.
func stmtDump(s pglog.Statement) string {
	str := fmt.Sprintf("pid=%d end=%d dur=%v phases=%d sql=%s", s.PID, s.End.Sub(base).Milliseconds(), s.Duration, s.Phases, s.SQL)
	if s.LockWait != 0 || s.Blocker != 0 {
		str += fmt.Sprintf(" lock=%v blocker=%d", s.LockWait, s.Blocker)
	}
	if s.Error != "" {
		str += " error=" + s.Error
	}
	return str
}

func TestStatements(t *testing.T) {
	tests := []struct {
		name  string
		lines []ln
		want  []string
	}{
		{"simple", []ln{
			{pid: 1, ms: 10, msg: "duration: 5.000 ms  statement: A"},
		}, []string{"pid=1 end=10 dur=5ms phases=1 sql=A"}},
		{"extended, interleaved with another backend", []ln{
			{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse <unnamed>: A"},
			{pid: 2, ms: 2, msg: "duration: 7.000 ms  statement: B"},
			{pid: 1, ms: 3, msg: "duration: 2.000 ms  bind <unnamed>: A"},
			{pid: 1, ms: 9, msg: "duration: 4.000 ms  execute <unnamed>: A"},
		}, []string{"pid=2 end=2 dur=7ms phases=1 sql=B", "pid=1 end=9 dur=7ms phases=3 sql=A"}},
		{"cached statement: bind and execute only", []ln{
			{pid: 1, ms: 5, msg: "duration: 1.000 ms  bind s1: A"},
			{pid: 1, ms: 6, msg: "duration: 1.000 ms  execute s1: A"},
			{pid: 1, ms: 8, msg: "duration: 1.000 ms  bind s1: A"},
			{pid: 1, ms: 9, msg: "duration: 1.000 ms  execute s1: A"},
		}, []string{"pid=1 end=6 dur=2ms phases=2 sql=A", "pid=1 end=9 dur=2ms phases=2 sql=A"}},
		{"prepare without execute is its own statement", []ln{
			{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse s1: A"},
			{pid: 1, ms: 2, msg: "duration: 1.000 ms  parse s2: B"},
			{pid: 1, ms: 3, msg: "duration: 1.000 ms  bind s2: B"},
			{pid: 1, ms: 4, msg: "duration: 1.000 ms  execute s2: B"},
		}, []string{"pid=1 end=1 dur=1ms phases=1 sql=A", "pid=1 end=4 dur=3ms phases=3 sql=B"}},
		{"bind of other SQL ends the parse", []ln{
			{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse s1: A"},
			{pid: 1, ms: 2, msg: "duration: 1.000 ms  bind s2: B"},
			{pid: 1, ms: 3, msg: "duration: 1.000 ms  execute s2: B"},
		}, []string{"pid=1 end=1 dur=1ms phases=1 sql=A", "pid=1 end=3 dur=2ms phases=2 sql=B"}},
		{"open parse flushed at the end", []ln{
			{pid: 3, ms: 1, msg: "duration: 1.000 ms  parse <unnamed>: A"},
			{pid: 2, ms: 2, msg: "duration: 1.000 ms  bind <unnamed>: B"},
		}, []string{"pid=2 end=2 dur=1ms phases=1 sql=B", "pid=3 end=1 dur=1ms phases=1 sql=A"}},
		{"lock wait in the parse", []ln{
			{pid: 1, ms: 100, msg: "process 1 still waiting for AccessShareLock on relation 1 of database 5 after 100.000 ms",
				detail: "Process holding the lock: 9. Wait queue: 1.", stmt: "A"},
			{pid: 9, ms: 290, msg: "duration: 300.000 ms  statement: LOCK"},
			{pid: 1, ms: 300, msg: "process 1 acquired AccessShareLock on relation 1 of database 5 after 300.000 ms", stmt: "A"},
			{pid: 1, ms: 300, msg: "duration: 300.100 ms  parse <unnamed>: A"},
			{pid: 1, ms: 300, msg: "duration: 0.100 ms  bind <unnamed>: A"},
			{pid: 1, ms: 301, msg: "duration: 0.100 ms  execute <unnamed>: A"},
			{pid: 1, ms: 302, msg: "duration: 0.100 ms  statement: A"},
		}, []string{
			"pid=9 end=290 dur=300ms phases=1 sql=LOCK",
			"pid=1 end=301 dur=300.3ms phases=3 sql=A lock=300ms blocker=9",
			"pid=1 end=302 dur=100µs phases=1 sql=A",
		}},
		{"lock report of another statement is not attached", []ln{
			{pid: 1, ms: 100, msg: "process 1 still waiting for AccessShareLock on relation 1 of database 5 after 100.000 ms", stmt: "X"},
			{pid: 1, ms: 200, msg: "duration: 1.000 ms  statement: A"},
			{pid: 1, ms: 300, msg: "duration: 1.000 ms  statement: X"},
		}, []string{"pid=1 end=200 dur=1ms phases=1 sql=A", "pid=1 end=300 dur=1ms phases=1 sql=X"}},
		{"error after bind", []ln{
			{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse <unnamed>: A"},
			{pid: 1, ms: 2, msg: "duration: 1.000 ms  bind <unnamed>: A"},
			{pid: 1, ms: 3, sev: "ERROR", msg: "division by zero", stmt: "A"},
			{pid: 1, ms: 4, sev: "ERROR", msg: "canceling statement due to lock timeout", stmt: "B"},
		}, []string{"pid=1 end=2 dur=2ms phases=2 sql=A error=division by zero"}},
		{"error of another statement ends a prepare without blaming it", []ln{
			{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse s1: A"},
			{pid: 1, ms: 2, sev: "ERROR", msg: "syntax error", stmt: "B"},
		}, []string{"pid=1 end=1 dur=1ms phases=1 sql=A"}},
		{"log_statement then bare duration", []ln{
			{pid: 1, ms: 1, msg: "statement: A"},
			{pid: 1, ms: 6, msg: "duration: 5.000 ms"},
			{pid: 1, ms: 7, msg: "duration: 5.000 ms"}, // nothing announced: ignored
		}, []string{"pid=1 end=6 dur=5ms phases=1 sql=A"}},
		{"other lines are ignored", []ln{
			{pid: 0, ms: 1, msg: "duration: 1.000 ms  statement: no pid"},
			{pid: 1, ms: 1, msg: "connection authorized: user=postgres"},
			{pid: 1, ms: 2, msg: "duration: 3.000 ms  plan:\nSeq Scan"},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := pglog.Statements(pglog.NewReader(strings.NewReader(jsonlog(tt.lines))), func(s pglog.Statement) {
				if !s.Start.Equal(s.End.Add(-s.Duration)) {
					t.Errorf("Start %v != End - Duration for %v", s.Start, s)
				}
				got = append(got, stmtDump(s))
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("statements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestStatementsStopsAtBadLine(t *testing.T) {
	in := jsonlog([]ln{{pid: 1, ms: 1, msg: "duration: 1.000 ms  parse <unnamed>: A"}}) + "junk\n" +
		jsonlog([]ln{{pid: 1, ms: 2, msg: "duration: 1.000 ms  statement: B"}})
	var n int
	err := pglog.Statements(pglog.NewReader(strings.NewReader(in)), func(pglog.Statement) { n++ })
	if err == nil || !strings.Contains(err.Error(), "line 2") || n != 1 {
		t.Errorf("strict: err %v, %d statements; want a line 2 error after 1 (flushed) statement", err, n)
	}
	n = 0
	r := pglog.NewReaderOptions(strings.NewReader(in), pglog.Options{Lenient: true})
	if err := pglog.Statements(r, func(pglog.Statement) { n++ }); err != nil || n != 2 || r.Skipped() != 1 {
		t.Errorf("lenient: err %v, %d statements, %d skipped; want nil, 2, 1", err, n, r.Skipped())
	}
}

func TestStatementTraceParent(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	in := jsonlog([]ln{{pid: 1, ms: 1, msg: "duration: 1.000 ms  statement: /*traceparent='" + tp + "'*/ SELECT 1"}})
	var got pglog.Statement
	if err := pglog.Statements(pglog.NewReader(strings.NewReader(in)), func(s pglog.Statement) { got = s }); err != nil {
		t.Fatal(err)
	}
	if got.TraceParent.String() != tp {
		t.Errorf("TraceParent = %s, want %s", got.TraceParent, tp)
	}
	if !strings.Contains(got.String(), "tp="+tp) {
		t.Errorf("String() = %s", got)
	}
}
