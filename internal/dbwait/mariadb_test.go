package dbwait_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/trace"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/tier"
)

// mariadb is a private MariaDB server started for one test: its socket and
// its slow query log (every statement: long_query_time=0).
type mariadb struct{ sock, slowLog string }

// startMariaDB initialises a data directory in a temporary folder and
// starts mariadbd on a Unix socket only, the way the lab starts
// PostgreSQL. It skips, loudly, where the machine has no MariaDB server.
func startMariaDB(t *testing.T, opts ...string) mariadb {
	t.Helper()
	tier.Require(t, "a MariaDB server")
	server, err1 := lookBin("mariadbd", "mysqld")
	install, err2 := lookBin("mariadb-install-db", "mysql_install_db")
	if err := errors.Join(err1, err2); err != nil {
		t.Skipf("SKIP: no MariaDB server here (Debian: apt-get install mariadb-server): %v", err)
	}
	dir, err := os.MkdirTemp("", "latscope-mariadb-") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := mariadb{sock: filepath.Join(dir, "sock"), slowLog: filepath.Join(dir, "slow.log")}
	var user []string
	if os.Geteuid() == 0 {
		user = []string{"--user=root"} // its files stay in this private folder
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(install, append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, user...)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", install, err, out)
	}
	cmd := exec.Command(server, append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + m.sock, "--skip-networking",
		"--pid-file=" + filepath.Join(dir, "pid"), "--log-error=" + filepath.Join(dir, "error.log"),
		"--slow-query-log=1", "--slow-query-log-file=" + m.slowLog, "--long-query-time=0"}, append(user, opts...)...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(m.sock); err == nil {
			return m
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("mariadbd did not open %s in 30 s:\n%s", m.sock, log)
		}
	}
}

func lookBin(names ...string) (string, error) {
	for _, n := range names {
		for _, p := range []string{n, "/usr/sbin/" + n, "/usr/bin/" + n} {
			if path, err := exec.LookPath(p); err == nil {
				return path, nil
			}
		}
	}
	return "", errors.New(names[0] + " not found")
}

// tracedQueries runs n SELECT SLEEP(0.02) through the agent's database/sql
// wrapper over go-sql-driver/mysql, each in a task, and returns the trace.
func tracedQueries(t *testing.T, m mariadb, n int) *bytes.Buffer {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", m.sock
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(agent.WrapConnector(conn))
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	defer trace.Stop()
	for range n {
		ctx, task := trace.NewTask(context.Background(), "job")
		var x int
		err := db.QueryRowContext(ctx, "SELECT SLEEP(0.02)").Scan(&x)
		task.End()
		if err != nil {
			t.Fatal(err)
		}
	}
	return &buf
}

// checkJoined checks that every query was joined with the server's own
// time, and the median query called inside the database: they only slept
// in it. The
// server's time may run a little past the app's span (performance_schema
// ends a statement's event after its result is sent), so that is logged,
// not asserted.
func checkJoined(t *testing.T, res *dbwait.Result, n int) {
	t.Helper()
	s := res.Summary
	t.Logf("%d spans, %d matched, %d statements (%d without a comment), %d over the threshold; app p50 %v, DB p50 %v; clock offset %v",
		s.Spans, s.Matched, s.Statements, s.Uncommented, s.Over, s.AppP50, s.DBP50, res.ClockOffset)
	if s.Spans != n || s.Matched != n {
		t.Errorf("%d spans, %d matched; want %d of each", s.Spans, s.Matched, n)
	}
	var past time.Duration // how far the server's time ran past the app's span
	for _, q := range res.Queries {
		// SLEEP times out on the wall clock, which the host's clock
		// discipline may move against the monotonic one: 19.65 ms (and
		// 19.75 ms in the app's span) at a load average of 38
		if q.DB < 19*time.Millisecond {
			t.Errorf("query %v: DB %v, app %v; want SLEEP(0.02)'s 20 ms, less at most 1 ms", q.TraceParent, q.DB, q.App)
		}
		past = max(past, q.DB-q.App)
	}
	t.Logf("the server's time ran past the app's span by up to %v", past)
	// The queries only slept inside the database, so the join places most
	// of each span there. On a busy host (the timing tier runs its tests
	// two at a time on two cores) the client or the server's thread may
	// wait for a CPU past the 10 ms threshold now and then: such a query is
	// rightly over it, with the verdict saying why. A join that paired the
	// wrong statements, or read the server's timer wrongly, moves every
	// query, so the median's outside time must stay within the threshold.
	for _, q := range res.Queries {
		if q.Outside > res.Options.Threshold {
			t.Logf("query %v: %v outside the database (app %v, DB %v): %v, %s", q.TraceParent, q.Outside, q.App, q.DB, q.Verdict, q.Rule)
		}
	}
	if s.OutsideP50 > res.Options.Threshold {
		t.Errorf("median outside the database %v (%d of %d over %v); they only slept inside it", s.OutsideP50, s.Over, s.Matched, res.Options.Threshold)
	}
}

// TestMariaDBSlowLog runs a real MariaDB end to end: a Go client through
// the agent's database/sql wrapper (a region, a traceparent log and a SQL
// comment per query), the server's slow query log, and dbwait joining the
// two. Every query is found in the log with the server's own time, and
// the median query is inside the database: they only sleep there.
func TestMariaDBSlowLog(t *testing.T) {
	tier.Busy(t)
	m := startMariaDB(t)
	const queries = 12
	buf := tracedQueries(t, m, queries)
	a := dbwait.New(dbwait.Options{})
	if _, err := analysis.Run(context.Background(), "mariadb.trace", buf, analysis.Options{}, analysis.Use(a)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(m.slowLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := dbwait.ReadMySQLSlowLog(m.slowLog, f, a.Statement); err != nil {
		t.Fatal(err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	checkJoined(t, res, queries)
}

// historyQuery is docs/dbwait.md's export of the statement history for
// MariaDB (which has no PS_CURRENT_THREAD_ID): wall-clock END_TIME from an
// anchor read in the same query.
const historyQuery = `SELECT h.THREAD_ID, h.EVENT_ID, h.TIMER_WAIT, h.LOCK_TIME, h.SQL_TEXT,
       DATE_SUB(UTC_TIMESTAMP(6), INTERVAL (n.now_ps - h.TIMER_END) DIV 1000000 MICROSECOND) AS END_TIME
  FROM performance_schema.events_statements_history_long h,
       (SELECT TIMER_START AS now_ps FROM performance_schema.events_statements_current
         WHERE THREAD_ID = (SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID())) n
 WHERE h.SQL_TEXT LIKE '/*%traceparent=%'`

// TestMariaDBHistoryExport runs the documented performance_schema export
// against a real MariaDB through its own client (mysql --batch): first with
// only the history consumer on, which MariaDB leaves empty (the error names
// the consumers), then with both; the statements, exported twice, are
// joined once and placed on the trace's clock.
func TestMariaDBHistoryExport(t *testing.T) {
	tier.Busy(t)
	m := startMariaDB(t, "--performance-schema=ON", "--performance-schema-consumer-events-statements-history-long=ON")
	client, err := lookBin("mariadb", "mysql")
	if err != nil {
		t.Skipf("SKIP: no MariaDB client: %v", err)
	}
	export := func(name string) string {
		out, err := exec.Command(client, "--socket="+m.sock, "-uroot", "--batch", "-e", historyQuery).Output()
		if err != nil {
			t.Fatalf("%s --batch: %v", client, err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string, a *dbwait.Analyzer) error {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return dbwait.ReadMySQLCSV(path, f, a.Statement)
	}
	const queries = 12
	tracedQueries(t, m, 2)
	err = read(export("off.tsv"), dbwait.New(dbwait.Options{}))
	if !errors.Is(err, dbwait.ErrNoHistory) {
		t.Fatalf("history with events_statements_current off: %v; want ErrNoHistory", err)
	}
	// Why it is empty: MariaDB 10.11 keeps no history at all without
	// events_statements_current (counted below: 0 rows), and the query's
	// clock anchor is a row of it. The error names that cause.
	count, cerr := exec.Command(client, "--socket="+m.sock, "-uroot", "--batch", "--skip-column-names", "-e",
		"SELECT COUNT(*) FROM performance_schema.events_statements_history_long WHERE SQL_TEXT LIKE '/*%traceparent=%'").Output()
	if cerr != nil {
		t.Fatalf("count the history: %v", cerr)
	}
	t.Logf("events_statements_current off: the history holds %s commented statements, the export none", strings.TrimSpace(string(count)))
	if !strings.Contains(err.Error(), "clock anchor") {
		t.Errorf("the empty export's error does not name the missing anchor row: %v", err)
	}
	// The MySQL 8 form of the query fails on MariaDB (no
	// PS_CURRENT_THREAD_ID): the client prints its error on standard error
	// and nothing on standard output, which the error names first.
	mysql8 := strings.Replace(historyQuery, "(SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID())", "PS_CURRENT_THREAD_ID()", 1)
	var stderr strings.Builder
	cmd := exec.Command(client, "--socket="+m.sock, "-uroot", "--batch", "-e", mysql8)
	cmd.Stderr = &stderr
	out, qerr := cmd.Output()
	if qerr == nil {
		t.Logf("the MySQL 8 form ran on this server (%d bytes): PS_CURRENT_THREAD_ID exists here", len(out))
	} else {
		t.Logf("the MySQL 8 form failed as documented: %v: %s", qerr, strings.TrimSpace(stderr.String()))
		path := filepath.Join(t.TempDir(), "failed.tsv")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		err := read(path, dbwait.New(dbwait.Options{}))
		if !errors.Is(err, dbwait.ErrNoHistory) || !strings.Contains(err.Error(), "PS_CURRENT_THREAD_ID") {
			t.Errorf("the failed query's empty export: %v; want ErrNoHistory naming PS_CURRENT_THREAD_ID", err)
		}
	}
	if out, err := exec.Command(client, "--socket="+m.sock, "-uroot", "-e",
		"UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'events_statements_current'").CombinedOutput(); err != nil {
		t.Fatalf("enable events_statements_current: %v\n%s", err, out)
	}
	buf := tracedQueries(t, m, queries)
	a := dbwait.New(dbwait.Options{})
	if _, err := analysis.Run(context.Background(), "mariadb.trace", buf, analysis.Options{}, analysis.Use(a)); err != nil {
		t.Fatal(err)
	}
	// two exports, the second read a little later, both holding every
	// statement: each row is counted and joined once, though its END_TIME
	// anchor moved between them
	first, second := export("history.tsv"), export("history-later.tsv")
	for _, path := range []string{first, second} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = a.ReadMySQLCSV(context.Background(), path, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err) // a clock mismatch would say the END_TIME anchor is wrong
	}
	checkJoined(t, res, queries)
	if res.Summary.Statements != queries {
		t.Errorf("two exports of the same %d statements: %d counted, want each once", queries, res.Summary.Statements)
	}
	for _, q := range res.Queries {
		if q.DBEnd.IsZero() {
			t.Errorf("query %v not placed: the export's END_TIME was not read", q.TraceParent)
			break
		}
	}
}
