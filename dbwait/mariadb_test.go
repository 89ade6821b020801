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
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/analysis"
	"github.com/latscope/latscope/dbwait"
)

// mariadb is a private MariaDB server started for one test: its socket and
// its slow query log (every statement: long_query_time=0).
type mariadb struct{ sock, slowLog string }

// startMariaDB initialises a data directory in a temporary folder and
// starts mariadbd on a Unix socket only, the way the lab starts
// PostgreSQL. It skips, loudly, where the machine has no MariaDB server.
func startMariaDB(t *testing.T) mariadb {
	t.Helper()
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
		"--slow-query-log=1", "--slow-query-log-file=" + m.slowLog, "--long-query-time=0"}, user...)...)
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

// TestMariaDBSlowLog runs a real MariaDB end to end: a Go client through
// the agent's database/sql wrapper (a region, a traceparent log and a SQL
// comment per query), the server's slow query log, and dbwait joining the
// two. Every query is found in the log with the server's own time, and
// none is called outside the database: they only sleep inside it.
func TestMariaDBSlowLog(t *testing.T) {
	m := startMariaDB(t)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", m.sock
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(agent.WrapConnector(conn))
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	const queries = 12
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	for range queries {
		ctx, task := trace.NewTask(context.Background(), "job")
		var x int
		if err := db.QueryRowContext(ctx, "SELECT SLEEP(0.02)").Scan(&x); err != nil {
			trace.Stop()
			t.Fatal(err)
		}
		task.End()
	}
	trace.Stop()
	a := dbwait.New(dbwait.Options{})
	if _, err := analysis.Run(context.Background(), "mariadb.trace", &buf, analysis.Options{}, analysis.Use(a)); err != nil {
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
	s := res.Summary
	t.Logf("%d spans, %d matched, %d statements in the slow log (%d without a comment), %d over the threshold; app p50 %v, DB p50 %v",
		s.Spans, s.Matched, s.Statements, s.Uncommented, s.Over, s.AppP50, s.DBP50)
	if s.Spans != queries || s.Matched != queries {
		t.Errorf("%d spans, %d matched; want %d of each", s.Spans, s.Matched, queries)
	}
	for _, q := range res.Queries {
		if q.DB < 20*time.Millisecond || q.DB > q.App {
			t.Errorf("query %v: DB %v, app %v; want SLEEP(0.02)'s 20 ms or more, within the app's span", q.TraceParent, q.DB, q.App)
		}
	}
	if s.Over != 0 {
		t.Errorf("%d queries called outside the database; they only slept inside it", s.Over)
	}
}
