package dbwait_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// TestMySQLCSVEndlessField (issue 29, item 9): a quoted field that never
// ends is refused in one line naming the file and the record's offset,
// in bounded memory (it was read whole, to "fatal error: out of memory").
func TestMySQLCSVEndlessField(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 256 MB of generated input")
	}
	const head = "SQL_TEXT,TIMER_WAIT\n\"SELECT 1\",5\n"
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	gen := &genReader{size: 256 << 20, next: func(i int) []byte {
		if i == 0 {
			return []byte(head + `"`)
		}
		return chunk
	}}
	var err error
	n := 0
	peak := peakHeap(t, func() {
		err = dbwait.ReadMySQLCSV("history.csv", gen, func(pglog.Statement) { n++ })
	})
	t.Logf("peak heap %d MB, error %v", peak>>20, err)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("history.csv: line 3 (byte offset %d): ", len(head))) || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the file, line 3 and byte offset %d", err, len(head))
	}
	if n != 1 {
		t.Errorf("%d statements before the endless field, want 1", n)
	}
	if peak > 100<<20 {
		t.Errorf("peak heap %d MB for a field of 256 MB: want under 100 MB", peak>>20)
	}
}

// TestMySQLSlowLogLongStatement (issue 29, item 11): one multi-line
// statement of 150 MB is refused in bounded memory, naming the file and
// its offset.
func TestMySQLSlowLogLongStatement(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 150 MB of generated input")
	}
	const head = "# Thread_id: 4  Schema: shop\n# Query_time: 0.020252  Lock_time: 0.000000\nSET timestamp=1796358688;\n"
	line := []byte("  OR id = 12345678901234567890123456789012345678901234567890\n")
	gen := &genReader{size: 150 << 20, next: func(i int) []byte {
		if i == 0 {
			return []byte(head + "SELECT 1 FROM t WHERE false\n")
		}
		return line
	}}
	var err error
	peak := peakHeap(t, func() {
		err = dbwait.ReadMySQLSlowLog("slow.log", gen, func(pglog.Statement) {})
	})
	t.Logf("peak heap %d MB, error %v", peak>>20, err)
	if err == nil || !strings.Contains(err.Error(), "slow.log: line 4 (byte offset ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the file, line 4 and its byte offset", err)
	}
	if peak > 100<<20 {
		t.Errorf("peak heap %d MB for a statement of 150 MB: want under 100 MB", peak>>20)
	}
}

// TestReadersSkipLongRecords: with ReadOptions.Skip, a record over the
// limit is passed over and the records around it are read; the Analyzer's
// readers count such records in one warning naming the first offset.
func TestReadersSkipLongRecords(t *testing.T) {
	long := strings.Repeat("z", 200)
	for _, tc := range []struct {
		name, in string
		read     func(name string, r *strings.Reader, fn func(pglog.Statement), o dbwait.ReadOptions) error
		skipAt   []int64
	}{
		{"csv", "SQL_TEXT,TIMER_WAIT\nSELECT 1,5\n\"SELECT '" + long + "\n" + long + "'\",5\nSELECT 2,5\n\"" + long + "\",7\n",
			func(n string, r *strings.Reader, fn func(pglog.Statement), o dbwait.ReadOptions) error {
				return dbwait.ReadMySQLCSVOptions(n, r, fn, o)
			}, []int64{31, 457}},
		{"tsv", "SQL_TEXT\tTIMER_WAIT\nSELECT 1\t5\n" + long + "\t5\nSELECT 2\t5\n",
			func(n string, r *strings.Reader, fn func(pglog.Statement), o dbwait.ReadOptions) error {
				return dbwait.ReadMySQLCSVOptions(n, r, fn, o)
			}, []int64{31}},
		{"slow log", "# Query_time: 0.1\nSELECT 1;\n# Query_time: 0.1\nSELECT\n" + long + ";\n# Query_time: 0.1\n" + long + long + "\n# Query_time: 0.1\nSELECT 2;\n",
			func(n string, r *strings.Reader, fn func(pglog.Statement), o dbwait.ReadOptions) error {
				return dbwait.ReadMySQLSlowLogOptions(n, r, fn, o)
			}, []int64{46, 273}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var skipped []int64
			err := tc.read("f", strings.NewReader(tc.in), func(s pglog.Statement) { got = append(got, s.SQL) },
				dbwait.ReadOptions{MaxRecordBytes: 100, Skip: func(off int64) { skipped = append(skipped, off) }})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[SELECT 1 SELECT 2]" || fmt.Sprint(skipped) != fmt.Sprint(tc.skipAt) {
				t.Errorf("read %q, skipped at %v; want [SELECT 1 SELECT 2], %v", got, skipped, tc.skipAt)
			}
			// without Skip, the first long record is refused, naming it
			err = tc.read("f", strings.NewReader(tc.in), func(pglog.Statement) {}, dbwait.ReadOptions{MaxRecordBytes: 100})
			if want := fmt.Sprintf("(byte offset %d): ", tc.skipAt[0]); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("without Skip: %v, want an error naming %q", err, want)
			}
		})
	}
}

// TestAnalyzerReadersWarn: the Analyzer's readers skip a record over
// 16 MiB and say so in one warning.
func TestAnalyzerReadersWarn(t *testing.T) {
	c := loadCapture(t, "lock")
	var stmts []pglog.Statement
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) { stmts = append(stmts, s) })
	csv := mysqlExport(t, stmts, false, true)
	cut := bytes.IndexByte(csv, '\n') + 1
	huge := "1,1,5,0,\"" + strings.Repeat("q", dbwait.DefaultMaxRecordBytes) + "\",2026-12-02 14:07:59.176123\n"
	in := string(csv[:cut]) + huge + string(csv[cut:])
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "lock", c.trace)
	if err := a.ReadMySQLCSV(t.Context(), "history.csv", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("history.csv: 1 record over 16 MiB skipped (first at byte offset %d)", cut)
	if !strings.Contains(fmt.Sprint(res.Warnings), want) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
}

// TestNoMatchSaysWhatWasSkipped: when nothing matched, the error says
// what was skipped for its length (it might have matched).
func TestNoMatchSaysWhatWasSkipped(t *testing.T) {
	c := loadCapture(t, "lock")
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "lock", c.trace)
	in := "# Query_time: 0.1\nSELECT '" + strings.Repeat("s", dbwait.DefaultMaxRecordBytes) + "';\n# Query_time: 0.1\nSELECT 2;\n"
	if err := a.ReadMySQLSlowLog(t.Context(), "slow.log", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	_, err := a.Finalize()
	if want := "; also, slow.log: 1 entry over 16 MiB skipped (first at byte offset 18)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to say %q", err, want)
	}
}

// TestAnalyzerCSVEndlessField: the command's reader, which skips long
// records, reads an endless quoted field in bounded memory to the end of
// the input and then says the field was never closed.
func TestAnalyzerCSVEndlessField(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 256 MB of generated input")
	}
	const head = "SQL_TEXT,TIMER_WAIT\n\"SELECT 1\",5\n"
	chunk := bytes.Repeat([]byte("a\n"), 32<<10)
	gen := &genReader{size: 256 << 20, next: func(i int) []byte {
		if i == 0 {
			return []byte(head + `"`)
		}
		return chunk
	}}
	a := dbwait.New(dbwait.Options{})
	var err error
	peak := peakHeap(t, func() { err = a.ReadMySQLCSV(t.Context(), "history.csv", gen) })
	t.Logf("peak heap %d MB, error %v", peak>>20, err)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("history.csv: line 3 (byte offset %d): a quoted field not closed before the end of the input", len(head))) {
		t.Errorf("err = %v, want the unclosed field at line 3, byte offset %d", err, len(head))
	}
	if peak > 100<<20 {
		t.Errorf("peak heap %d MB for a field of 256 MB: want under 100 MB", peak>>20)
	}
}

// TestReaderErrorSaysWhatWasSkipped: an export whose only row was too long
// is refused as empty, and the error says the row was skipped.
func TestReaderErrorSaysWhatWasSkipped(t *testing.T) {
	in := "SQL_TEXT,TIMER_WAIT\n\"" + strings.Repeat("r", dbwait.DefaultMaxRecordBytes) + "\",5\n"
	err := dbwait.New(dbwait.Options{}).ReadMySQLCSV(t.Context(), "history.csv", strings.NewReader(in))
	if !errors.Is(err, dbwait.ErrNoHistory) || !strings.HasSuffix(err.Error(), "; also skipped: 1 record over 16 MiB (first at byte offset 20)") {
		t.Errorf("err = %v, want ErrNoHistory saying the record was skipped", err)
	}
}
