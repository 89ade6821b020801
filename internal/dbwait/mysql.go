package dbwait

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// ReadMySQLCSV reads an export of MySQL's or MariaDB's
// performance_schema.events_statements_history_long as statements: CSV
// with a header row, or tab-separated (mysql --batch output, with its \t,
// \n, \\ and \0 escapes). Columns are found by name, case-insensitively:
//
//   - SQL_TEXT (required): the statement, with its traceparent comment;
//   - TIMER_WAIT (required): the duration in picoseconds;
//   - LOCK_TIME: table-lock wait in picoseconds;
//   - THREAD_ID: becomes Statement.PID;
//   - EVENT_ID: with THREAD_ID, the row's identity in the history (an
//     Analyzer reading several exports joins a row in two of them once);
//   - END_TIME: the wall-clock end, "2006-01-02 15:04:05.999999" in UTC or
//     RFC 3339. Without it statements have no time (TIMER_END counts from
//     server start), so they are joined and compared but not placed.
//
// A record over DefaultMaxRecordBytes is refused (ReadMySQLCSVOptions can
// skip it instead); memory stays bounded by that limit. name is used in
// errors, which give the line number and byte offset.
func ReadMySQLCSV(name string, r io.Reader, fn func(pglog.Statement)) error {
	return ReadMySQLCSVOptions(name, r, fn, ReadOptions{})
}

// ReadMySQLCSVOptions is ReadMySQLCSV bounded and stopped by opts: a record
// (or tab-separated line) over opts.MaxRecordBytes is passed to opts.Skip
// or, without it, refused in an error naming its line and byte offset.
func ReadMySQLCSVOptions(name string, r io.Reader, fn func(pglog.Statement), opts ReadOptions) error {
	return readMySQLCSV(name, r, func(s pglog.Statement, _ uint64) { fn(s) }, opts)
}

// readMySQLCSV is ReadMySQLCSVOptions passing each statement's EVENT_ID
// too (0 when the export has no such column), which with THREAD_ID
// identifies a row of the history from one export to the next.
func readMySQLCSV(name string, r io.Reader, fn func(s pglog.Statement, event uint64), opts ReadOptions) error {
	opts, r = opts.withDefaults(r)
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := br.Peek(peekLen(br))
	if err != nil && len(first) == 0 {
		if err == io.EOF {
			return fmt.Errorf("%s: empty file, want a header row with SQL_TEXT and TIMER_WAIT (a client prints none for an empty result): %w", name, ErrNoHistory)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	rows := &rowReader{lr: newLineReader(br, opts.MaxRecordBytes), opts: opts, tsv: isTSV(first)}
	rows.lr.stop = opts.Skip == nil
	header, _, off, err := rows.next()
	if err == io.EOF {
		return fmt.Errorf("%s: header: empty file: %w", name, ErrNoHistory)
	}
	if err != nil {
		return fmt.Errorf("%s: header (byte offset %d): %w", name, off, err)
	}
	cols, err := mysqlColumns(header)
	if err != nil {
		return fmt.Errorf("%s: header: %w", name, err)
	}
	for n := 0; ; n++ {
		row, line, off, err := rows.next()
		if err == io.EOF && n == 0 {
			return fmt.Errorf("%s: %w", name, ErrNoHistory)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d (byte offset %d): %w", name, line, off, err)
		}
		s, err := cols.statement(row)
		if err != nil {
			return fmt.Errorf("%s: line %d (byte offset %d): %w", name, line, off, err)
		}
		event, err := cols.eventID(row)
		if err != nil {
			return fmt.Errorf("%s: line %d (byte offset %d): %w", name, line, off, err)
		}
		fn(s, event)
	}
}

// ErrNoHistory is the error of an empty export: a client prints nothing,
// not even a header, both for an empty result and for a query that failed
// (its error goes to the client's standard error), so the file cannot say
// which; the error names every cause, the likeliest first.
var ErrNoHistory = errors.New("the export has no statements, which has three causes the file cannot tell apart: " +
	"(1) the export query failed — its error went to the client's standard error; MariaDB has no PS_CURRENT_THREAD_ID(): use the MariaDB form of the query in docs/dbwait.md; " +
	"(2) a consumer is off: both events_statements_history_long and events_statements_current must be on — MariaDB 10.11 keeps no history without the second, and the query's clock anchor is a row of it " +
	"(UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ('events_statements_current', 'events_statements_history_long'), or the performance-schema-consumer-… options at start); " +
	"(3) no statement carried a traceparent comment")

// peekLen is how much of the input decides the format: the first line, up
// to the buffer.
func peekLen(br *bufio.Reader) int { return min(br.Size(), 4096) }

// isTSV tells tab-separated input by its first line: tabs and no comma.
func isTSV(b []byte) bool {
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.Contains(line, "\t") && !strings.Contains(line, ",")
}

// errTooLong is the error of a record over the limit when it is refused.
func errTooLong(max int) error {
	return fmt.Errorf("a record over %s, the limit (a quoted field not closed makes the rest of the input one record)", sizeText(max))
}

// errUnclosed is the error of a record over the limit whose quoted field
// the input ends in.
var errUnclosed = errors.New("a quoted field not closed before the end of the input")

// rowReader splits CSV into records, which a quoted field may carry over
// several lines, or tab-separated text into lines, each of at most
// opts.MaxRecordBytes; a longer one is passed to opts.Skip or, without
// it, refused.
type rowReader struct {
	lr   *lineReader
	opts ReadOptions
	tsv  bool
	rec  []byte
}

// next returns the next row, the line and byte offset it starts at, and
// io.EOF at the end. Empty lines are skipped.
func (rr *rowReader) next() (row []string, line int, off int64, err error) {
	for {
		b, long, err := rr.lr.next()
		line, off = rr.lr.line, rr.lr.start
		if err != nil {
			return nil, line + 1, off, err // the line it was reading
		}
		if !long && len(trimEOL(b)) == 0 {
			continue
		}
		if long && rr.opts.Skip == nil {
			return nil, line, off, errTooLong(rr.opts.MaxRecordBytes)
		}
		rr.rec = append(rr.rec[:0], b...)
		quotes := rr.lr.quotes
		for !rr.tsv && quotes%2 == 1 { // in a quoted field: the record goes on
			more, l, err := rr.lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, line, off, err
			}
			quotes += rr.lr.quotes
			if !long && (l || len(rr.rec)+len(more) > rr.opts.MaxRecordBytes) {
				if rr.opts.Skip == nil {
					return nil, line, off, errTooLong(rr.opts.MaxRecordBytes)
				}
				long, rr.rec = true, rr.rec[:0]
			}
			if !long {
				rr.rec = append(rr.rec, more...)
			}
		}
		switch {
		case long && !rr.tsv && quotes%2 == 1:
			return nil, line, off, fmt.Errorf("%w: the record is over %s", errUnclosed, sizeText(rr.opts.MaxRecordBytes))
		case long:
			rr.opts.Skip(off)
			continue
		case rr.tsv:
			f := strings.Split(string(trimEOL(rr.rec)), "\t")
			for i := range f {
				f[i] = unescapeBatch(f[i])
			}
			return f, line, off, nil
		}
		row, err := parseCSVRecord(rr.rec)
		return row, line, off, err
	}
}

// parseCSVRecord splits one CSV record (RFC 4180, as encoding/csv reads it
// without LazyQuotes: a field in double quotes may hold commas, newlines
// and "" for a quote; "\r\n" in it becomes "\n").
func parseCSVRecord(rec []byte) ([]string, error) {
	rec = trimEOL(rec)
	var row []string
	var f []byte
	for i := 0; ; {
		f = f[:0]
		if i < len(rec) && rec[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(rec[i:], '"')
				if j < 0 {
					return nil, csv.ErrQuote
				}
				f = append(f, rec[i:i+j]...)
				i += j + 1
				if i < len(rec) && rec[i] == '"' {
					f = append(f, '"')
					i++
					continue
				}
				if i < len(rec) && rec[i] != ',' {
					return nil, csv.ErrQuote
				}
				break
			}
			f = bytes.ReplaceAll(f, []byte("\r\n"), []byte("\n"))
		} else {
			j := bytes.IndexByte(rec[i:], ',')
			if j < 0 {
				j = len(rec) - i
			}
			if bytes.IndexByte(rec[i:i+j], '"') >= 0 {
				return nil, csv.ErrBareQuote
			}
			f = append(f, rec[i:i+j]...)
			i += j
		}
		row = append(row, string(f))
		if i >= len(rec) {
			return row, nil
		}
		i++ // the comma
	}
}

// unescapeBatch undoes mysql --batch escaping.
func unescapeBatch(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case '0':
			b.WriteByte(0)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// mysqlCols are the column indexes of a header; -1 = absent.
type mysqlCols struct{ sql, wait, lock, thread, event, end, n int }

func mysqlColumns(header []string) (mysqlCols, error) {
	c := mysqlCols{sql: -1, wait: -1, lock: -1, thread: -1, event: -1, end: -1, n: len(header)}
	for i, h := range header {
		switch strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "SQL_TEXT":
			c.sql = i
		case "TIMER_WAIT":
			c.wait = i
		case "LOCK_TIME":
			c.lock = i
		case "THREAD_ID":
			c.thread = i
		case "EVENT_ID":
			c.event = i
		case "END_TIME":
			c.end = i
		}
	}
	if c.sql < 0 || c.wait < 0 {
		return c, fmt.Errorf("want columns SQL_TEXT and TIMER_WAIT, got %q", header)
	}
	return c, nil
}

// statement converts one row.
func (c mysqlCols) statement(row []string) (pglog.Statement, error) {
	if len(row) != c.n {
		return pglog.Statement{}, fmt.Errorf("%d fields, the header has %d", len(row), c.n)
	}
	s := pglog.Statement{SQL: row[c.sql], Phases: 1}
	var err error
	if s.Duration, err = picoseconds(row[c.wait]); err != nil {
		return s, fmt.Errorf("TIMER_WAIT: %w", err)
	}
	if c.lock >= 0 && !isNull(row[c.lock]) {
		if s.LockWait, err = picoseconds(row[c.lock]); err != nil {
			return s, fmt.Errorf("LOCK_TIME: %w", err)
		}
	}
	if c.thread >= 0 && !isNull(row[c.thread]) {
		if s.PID, err = strconv.Atoi(strings.TrimSpace(row[c.thread])); err != nil {
			return s, fmt.Errorf("THREAD_ID: %w", err)
		}
	}
	if c.end >= 0 && !isNull(row[c.end]) {
		if s.End, err = parseEndTime(row[c.end]); err != nil {
			return s, fmt.Errorf("END_TIME: %w", err)
		}
		s.Start = s.End.Add(-s.Duration)
	}
	s.TraceParent, _ = pglog.FindTraceParent(s.SQL)
	return s, nil
}

// eventID is the row's EVENT_ID, 0 without the column or a value (row
// has the header's fields: statement checked that first).
func (c mysqlCols) eventID(row []string) (uint64, error) {
	if c.event < 0 || isNull(row[c.event]) {
		return 0, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(row[c.event]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("EVENT_ID: %w", err)
	}
	return n, nil
}

func isNull(s string) bool { s = strings.TrimSpace(s); return s == "" || s == "NULL" || s == `\N` }

// picoseconds parses a performance_schema timer value.
func picoseconds(s string) (time.Duration, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(n / 1000), nil
}

func parseEndTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02 15:04:05.999999999", s)
}
