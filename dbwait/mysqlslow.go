package dbwait

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/pglog"
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
// error (the server was not told to log them). name is used in errors,
// which give the line number.
func ReadMySQLSlowLog(name string, r io.Reader, fn func(pglog.Statement)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var (
		cur     pglog.Statement
		sql     []string
		timed   bool // cur has its Query_time
		header  int  // line of cur's first header line; 0: no entry open
		n       int
		entries int
	)
	flush := func() error {
		if header == 0 {
			return nil
		}
		text := strings.TrimSpace(strings.Join(sql, "\n"))
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
		switch {
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
		cur, sql, timed, header = pglog.Statement{}, nil, false, 0
		return nil
	}
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "# "):
			if len(sql) > 0 { // the next entry's header ends this one's statement
				if err := flush(); err != nil {
					return err
				}
			}
			if header == 0 {
				header = n
			}
			if err := slowHeader(line, &cur, &timed); err != nil {
				return fmt.Errorf("%s: line %d: %w", name, n, err)
			}
		case header == 0 || isSlowBanner(line):
			// before the first entry, or the banner a (re)started server writes
		case strings.HasPrefix(line, "SET timestamp=") || strings.HasPrefix(line, "use ") && strings.HasSuffix(line, ";") && len(sql) == 0:
			// whole seconds only; the current database
		default:
			sql = append(sql, line)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %w", name, n, err)
	}
	if err := flush(); err != nil {
		return err
	}
	if entries == 0 {
		return fmt.Errorf("%s: no statement in it (no \"# Query_time:\" entry in %d lines): the server logs every statement only with slow_query_log = 1 and long_query_time = 0, or this is not a slow query log", name, n)
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
