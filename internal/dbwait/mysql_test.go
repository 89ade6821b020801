package dbwait_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// mysqlExport writes statements as an events_statements_history_long
// export: CSV, or mysql --batch TSV with its escapes.
func mysqlExport(t testing.TB, stmts []pglog.Statement, tsv, endTime bool) []byte {
	t.Helper()
	header := []string{"THREAD_ID", "EVENT_ID", "TIMER_WAIT", "LOCK_TIME", "SQL_TEXT"}
	if endTime {
		header = append(header, "END_TIME")
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if tsv {
		b.WriteString(strings.Join(header, "\t") + "\n")
	} else {
		w.Write(header)
	}
	for i, s := range stmts {
		row := []string{strconv.Itoa(s.PID), strconv.Itoa(i + 1), strconv.FormatInt(int64(s.Duration)*1000, 10),
			strconv.FormatInt(int64(s.LockWait)*1000, 10), s.SQL}
		if endTime {
			row = append(row, s.End.UTC().Format("2006-01-02 15:04:05.000000"))
		}
		if tsv {
			for j := range row {
				row[j] = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`).Replace(row[j])
			}
			b.WriteString(strings.Join(row, "\t") + "\n")
		} else {
			w.Write(row)
		}
	}
	w.Flush()
	return b.Bytes()
}

// TestMySQLExportJoinsLikePGLog: the lock capture's statements, exported
// as MySQL would, join and classify exactly as the jsonlog does.
func TestMySQLExportJoinsLikePGLog(t *testing.T) {
	c := loadCapture(t, "lock")
	var stmts []pglog.Statement
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) { stmts = append(stmts, s) })
	want := analyse(t, "lock", dbwait.Options{})
	for _, tc := range []struct {
		name         string
		tsv, endTime bool
	}{{"csv", false, true}, {"tsv", true, true}, {"csv without END_TIME", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := dbwait.New(dbwait.Options{})
			feedTrace(t, a, "lock", c.trace)
			if err := dbwait.ReadMySQLCSV("history.csv", bytes.NewReader(mysqlExport(t, stmts, tc.tsv, tc.endTime)), a.Statement); err != nil {
				t.Fatal(err)
			}
			got, err := a.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Queries) != len(want.Queries) {
				t.Fatalf("%d queries, want %d", len(got.Queries), len(want.Queries))
			}
			for i, q := range got.Queries {
				w := want.Queries[i]
				// TIMER_WAIT is in picoseconds: the durations survive exactly.
				if q.DB != w.DB || q.Verdict != w.Verdict || q.LockWait != w.LockWait || q.SQL != w.SQL || q.Evidence.Placed != tc.endTime {
					t.Errorf("query %d: DB %v lock %v %v placed %v, want DB %v lock %v %v placed %v", i, q.DB, q.LockWait, q.Verdict, q.Evidence.Placed, w.DB, w.LockWait, w.Verdict, tc.endTime)
				}
			}
		})
	}
}

func TestReadMySQLCSV(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, tc := range []struct {
		name, in string
		want     string // fmt of the statements, or the error
	}{
		{"csv", "THREAD_ID,TIMER_WAIT,LOCK_TIME,SQL_TEXT\n42,1500000000,0,\"/*traceparent='" + tp + "'*/ SELECT 1, 2\"\n",
			"pid=42 dur=1.5ms lock=0s tp=" + tp + " sql=\"/*traceparent='" + tp + "'*/ SELECT 1, 2\" end=0001-01-01T00:00:00Z"},
		{"tsv escapes and NULL", "THREAD_ID\tTIMER_WAIT\tLOCK_TIME\tSQL_TEXT\tEND_TIME\nNULL\t2000\tNULL\tSELECT\\t1\\nFROM t\t2026-12-02 14:07:59.176123\n",
			"pid=0 dur=2ns lock=0s tp=- sql=\"SELECT\\t1\\nFROM t\" end=2026-12-02T14:07:59.176123Z"},
		{"rfc3339 end, lower-case header, BOM", "\ufeffsql_text,timer_wait,end_time\nSELECT 1,1000000,2026-12-02T14:07:59.5Z\n",
			"pid=0 dur=1µs lock=0s tp=- sql=\"SELECT 1\" end=2026-12-02T14:07:59.5Z"},
		{"empty", "", "history.csv: empty file"},
		{"no TIMER_WAIT", "SQL_TEXT\nSELECT 1\n", "history.csv: header: want columns SQL_TEXT and TIMER_WAIT"},
		{"bad TIMER_WAIT", "SQL_TEXT,TIMER_WAIT\nSELECT 1,-5\n", "history.csv: line 2 (byte offset 20): TIMER_WAIT"},
		{"short row", "SQL_TEXT,TIMER_WAIT\nSELECT 1\n", "history.csv: line 2 (byte offset 20): 1 fields, the header has 2"},
		{"bad END_TIME", "SQL_TEXT,TIMER_WAIT,END_TIME\nSELECT 1,5,yesterday\n", "history.csv: line 2 (byte offset 29): END_TIME"},
		{"bad quoting", "SQL_TEXT,TIMER_WAIT\n\"SELECT 1,5\n", "history.csv: line 2 (byte offset 20): extraneous or missing \" in quoted-field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := dbwait.ReadMySQLCSV("history.csv", strings.NewReader(tc.in), func(s pglog.Statement) {
				tps := "-"
				if s.TraceParent.IsValid() {
					tps = s.TraceParent.String()
				}
				got = append(got, fmt.Sprintf("pid=%d dur=%v lock=%v tp=%s sql=%q end=%s", s.PID, s.Duration, s.LockWait, tps, s.SQL, s.End.Format(time.RFC3339Nano)))
				if !s.End.IsZero() && !s.Start.Equal(s.End.Add(-s.Duration)) {
					t.Errorf("start %v != end − duration", s.Start)
				}
			})
			if err != nil {
				got = append(got, err.Error())
			}
			if s := strings.Join(got, "\n"); !strings.HasPrefix(s, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", s, tc.want)
			}
		})
	}
}

// FuzzReadMySQLCSV: any input is read or refused, never a panic; what is
// read has non-negative durations.
func FuzzReadMySQLCSV(f *testing.F) {
	var stmts []pglog.Statement
	pglog.Statements(pglog.NewReader(bytes.NewReader(loadCapture(f, "lock").pglog)), func(s pglog.Statement) { stmts = append(stmts, s) })
	f.Add(mysqlExport(f, stmts[:5], false, true))
	f.Add(mysqlExport(f, stmts[:5], true, false))
	f.Add([]byte("SQL_TEXT\tTIMER_WAIT\n\\\t1\n"))
	f.Add([]byte("sql_text,timer_wait,thread_id\n\"a\"\"b\",1,x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		check := func(s pglog.Statement) {
			if s.Duration < 0 || s.LockWait < 0 {
				t.Fatalf("negative duration in %+v", s)
			}
		}
		if err := dbwait.ReadMySQLCSV("fuzz", bytes.NewReader(in), check); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error on several lines: %q", err)
		}
		// with a small limit, long records are skipped, at offsets in the input
		last := int64(-1)
		dbwait.ReadMySQLCSVOptions("fuzz", bytes.NewReader(in), check, dbwait.ReadOptions{MaxRecordBytes: 16, Skip: func(off int64) {
			if off <= last || off >= int64(len(in)) {
				t.Fatalf("skipped at %d after %d, of %d bytes", off, last, len(in))
			}
			last = off
		}})
	})
}
