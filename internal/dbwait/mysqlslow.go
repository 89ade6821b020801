package dbwait

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// ReadMySQLSlowLog reads a MySQL or MariaDB slow query log as statements:
// with long_query_time=0 the server writes every statement there, its SQL
// text as sent (with the traceparent comment) under a header:
//
//	# Time: 261204  4:31:28
//	# User@Host: app[app] @ localhost []
//	# Thread_id: 4  Schema: shop  QC_hit: No
//	# Query_time: 0.020252  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 0
//	SET timestamp=1796358688;
//	/*traceparent='00-…'*/ SELECT …;
//
// Query_time becomes Statement.Duration, Lock_time LockWait and Thread_id
// PID. The log's times are whole seconds (SET timestamp, and MariaDB's
// "# Time"), too coarse to place a statement against its app span, so the
// statements are joined by traceparent and compared but not placed (as a
// CSV export without END_TIME). The server's banner lines (written at each
// start) and "use db;" lines are skipped. A log with no statement is an
// error (the server was not told to log them). A statement over
// DefaultMaxRecordBytes is refused (ReadMySQLSlowLogOptions can skip it
// instead). name is used in errors, which give the line number.
func ReadMySQLSlowLog(name string, r io.Reader, fn func(pglog.Statement)) error {
	return ReadMySQLSlowLogOptions(name, r, fn, ReadOptions{})
}

// ReadMySQLSlowLogOptions is ReadMySQLSlowLog bounded and stopped by opts:
// an entry whose statement (or any line of it) is over
// opts.MaxRecordBytes is passed to opts.Skip or, without it, refused in an
// error naming the statement's line and byte offset.
func ReadMySQLSlowLogOptions(name string, r io.Reader, fn func(pglog.Statement), opts ReadOptions) error {
	opts, r = opts.withDefaults(r)
	lr := newLineReader(bufio.NewReaderSize(r, 64<<10), opts.MaxRecordBytes)
	lr.stop = opts.Skip == nil
	var (
		cur     pglog.Statement
		sql     []byte
		sqlLine int   // line and offset of the statement's first line; 0: none yet
		sqlOff  int64 //
		long    bool  // the statement is over the limit: skipped
		timed   bool  // cur has its Query_time
		header  int   // line of cur's first header line; 0: no entry open
		entries int
	)
	flush := func() error {
		if header == 0 {
			return nil
		}
		text := strings.TrimSpace(string(sql))
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
		switch {
		case long:
			opts.Skip(sqlOff)
		case text == "":
			// a header without a statement (a log cut mid-entry): nothing to join
		case !timed:
			return fmt.Errorf("%s: line %d: a statement without a \"# Query_time:\" line", name, header)
		default:
			cur.SQL = text
			cur.TraceParent, _ = pglog.FindTraceParent(text)
			cur.Phases = 1
			fn(cur)
			entries++
		}
		cur, sql, sqlLine, long, timed, header = pglog.Statement{}, sql[:0], 0, false, false, 0
		return nil
	}
	for {
		b, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: line %d (byte offset %d): %w", name, lr.line+1, lr.start, err)
		}
		line := string(trimEOL(b))
		switch {
		case tooLong && header == 0 && opts.Skip == nil:
			return fmt.Errorf("%s: line %d (byte offset %d): a line over %s, the limit", name, lr.line, lr.start, sizeText(opts.MaxRecordBytes))
		case tooLong && header == 0:
			// before the first entry
		case tooLong:
			if sqlLine == 0 {
				sqlLine, sqlOff = lr.line, lr.start
			}
			long = true
		case strings.HasPrefix(line, "# "):
			if sqlLine != 0 { // the next entry's header ends this one's statement
				if err := flush(); err != nil {
					return err
				}
			}
			if header == 0 {
				header = lr.line
			}
			if err := slowHeader(line, &cur, &timed); err != nil {
				return fmt.Errorf("%s: line %d: %w", name, lr.line, err)
			}
		case header == 0 || isSlowBanner(line):
			// before the first entry, or the banner a (re)started server writes
		case strings.HasPrefix(line, "SET timestamp=") || strings.HasPrefix(line, "use ") && strings.HasSuffix(line, ";") && sqlLine == 0:
			// whole seconds only; the current database
		default:
			if sqlLine == 0 {
				sqlLine, sqlOff = lr.line, lr.start
			} else if !long {
				sql = append(sql, '\n')
			}
			if !long && len(sql)+len(line) > opts.MaxRecordBytes {
				long, sql = true, sql[:0]
			}
			if !long {
				sql = append(sql, line...)
			}
		}
		if long && opts.Skip == nil {
			return fmt.Errorf("%s: line %d (byte offset %d): a statement over %s, the limit", name, sqlLine, sqlOff, sizeText(opts.MaxRecordBytes))
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if entries == 0 {
		return fmt.Errorf("%s: no statement in it (no \"# Query_time:\" entry in %d lines): the server logs every statement only with slow_query_log = 1 and long_query_time = 0, or this is not a slow query log", name, lr.line)
	}
	return nil
}

// slowHeader reads one "# " header line into s.
func slowHeader(line string, s *pglog.Statement, timed *bool) error {
	body := strings.TrimPrefix(line, "# ")
	switch {
	case strings.HasPrefix(body, "Thread_id:"):
		f := strings.Fields(strings.TrimPrefix(body, "Thread_id:"))
		if len(f) > 0 {
			id, err := strconv.Atoi(f[0])
			if err != nil {
				return fmt.Errorf("Thread_id %q: want a number", f[0])
			}
			s.PID = id
		}
	case strings.HasPrefix(body, "Query_time:"):
		q, err := slowSeconds(body, "Query_time:")
		if err != nil {
			return err
		}
		s.Duration, *timed = q, true
		if strings.Contains(body, "Lock_time:") {
			l, err := slowSeconds(body, "Lock_time:")
			if err != nil {
				return err
			}
			s.LockWait = l
		}
	}
	return nil
}

// slowSeconds reads the decimal seconds after key in a header line.
func slowSeconds(body, key string) (time.Duration, error) {
	_, rest, _ := strings.Cut(body, key)
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0, fmt.Errorf("%s without a value", strings.TrimSuffix(key, ":"))
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || !(v >= 0 && v < 1e9) {
		return 0, fmt.Errorf("%s %q: want non-negative decimal seconds", strings.TrimSuffix(key, ":"), f[0])
	}
	return time.Duration(v*1e9 + 0.5), nil
}

// isSlowBanner reports the lines a server writes at the top of its slow
// log when it starts (again).
func isSlowBanner(line string) bool {
	return strings.Contains(line, ", Version: ") && strings.Contains(line, "started with:") ||
		strings.HasPrefix(line, "Tcp port: ") ||
		strings.HasPrefix(line, "Time ") && strings.Contains(line, "Id Command") && strings.Contains(line, "Argument")
}
