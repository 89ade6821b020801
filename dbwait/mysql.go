package dbwait

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/pglog"
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
//   - END_TIME: the wall-clock end, "2006-01-02 15:04:05.999999" in UTC or
//     RFC 3339. Without it statements have no time (TIMER_END counts from
//     server start), so they are joined and compared but not placed.
//
// name is used in errors, which give the line number.
func ReadMySQLCSV(name string, r io.Reader, fn func(pglog.Statement)) error {
	br := bufio.NewReader(r)
	first, err := br.Peek(peekLen(br))
	if err != nil && len(first) == 0 {
		if err == io.EOF {
			return fmt.Errorf("%s: empty file, want a header row with SQL_TEXT and TIMER_WAIT (a client prints none for an empty result): %w", name, ErrNoHistory)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	next := csvRows(br)
	if isTSV(first) {
		next = tsvRows(br)
	}
	header, _, err := next()
	if err != nil {
		return fmt.Errorf("%s: header: %w", name, err)
	}
	cols, err := mysqlColumns(header)
	if err != nil {
		return fmt.Errorf("%s: header: %w", name, err)
	}
	for rows := 0; ; rows++ {
		row, line, err := next()
		if err == io.EOF && rows == 0 {
			return fmt.Errorf("%s: %w", name, ErrNoHistory)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		s, err := cols.statement(row)
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		fn(s)
	}
}

// ErrNoHistory is the error of an export with a header and no rows: the
// statement history is off, or the export's filter matched nothing.
var ErrNoHistory = errors.New("the export has no statements: events_statements_history_long stays empty unless the performance_schema consumers events_statements_history_long and events_statements_current are both enabled (UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ('events_statements_current', 'events_statements_history_long'), or performance-schema-consumer-… options at start), or no statement carried a traceparent comment")

// peekLen is how much of the input decides the format: the first line, up
// to the buffer.
func peekLen(br *bufio.Reader) int { return min(br.Size(), 4096) }

// isTSV tells tab-separated input by its first line: tabs and no comma.
func isTSV(b []byte) bool {
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.Contains(line, "\t") && !strings.Contains(line, ",")
}

// rowFunc returns the next row, the line it starts on, and io.EOF at the end.
type rowFunc func() ([]string, int, error)

func csvRows(r io.Reader) rowFunc {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	return func() ([]string, int, error) {
		row, err := cr.Read()
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.StartLine, pe.Err
		}
		if err != nil {
			return nil, 0, err
		}
		line, _ := cr.FieldPos(0)
		return row, line, nil
	}
}

func tsvRows(r io.Reader) rowFunc {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	return func() ([]string, int, error) {
		for sc.Scan() {
			n++
			line := strings.TrimSuffix(sc.Text(), "\r")
			if line == "" {
				continue
			}
			f := strings.Split(line, "\t")
			for i := range f {
				f[i] = unescapeBatch(f[i])
			}
			return f, n, nil
		}
		if err := sc.Err(); err != nil {
			return nil, n, err
		}
		return nil, n, io.EOF
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
type mysqlCols struct{ sql, wait, lock, thread, end, n int }

func mysqlColumns(header []string) (mysqlCols, error) {
	c := mysqlCols{sql: -1, wait: -1, lock: -1, thread: -1, end: -1, n: len(header)}
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
