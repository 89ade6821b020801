package dbwait_test

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// slowLog is what MariaDB 10.11 wrote with long_query_time=0 (taken from a
// real server's log: the banner, entries with and without "# Time").
const slowLog = `mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 13306  Unix socket: /tmp/x/sock
Time		    Id Command	Argument
# Time: 261204  4:31:26
# User@Host: root[root] @ localhost []
# Thread_id: 3  Schema:   QC_hit: No
# Query_time: 0.050238  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 0
# Rows_affected: 0  Bytes_sent: 98
SET timestamp=1796358686;
SELECT SLEEP(0.05), 1;
# User@Host: app[app] @ localhost []
# Thread_id: 4  Schema: shop  QC_hit: No
# Query_time: 0.020252  Lock_time: 0.001500  Rows_sent: 1  Rows_examined: 0
# Rows_affected: 0  Bytes_sent: 98
use shop;
SET timestamp=1796358688;
/*traceparent='00-11111111111111111111111111111111-2222222222222222-01'*/ SELECT id
FROM orders
WHERE id = 1;
`

func TestReadMySQLSlowLog(t *testing.T) {
	var got []pglog.Statement
	if err := dbwait.ReadMySQLSlowLog("slow.log", strings.NewReader(slowLog), func(s pglog.Statement) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d statements, want 2", len(got))
	}
	a, b := got[0], got[1]
	if a.Duration != 50238*time.Microsecond || a.PID != 3 || a.SQL != "SELECT SLEEP(0.05), 1" || a.TraceParent.IsValid() {
		t.Errorf("first: %v", a)
	}
	if b.Duration != 20252*time.Microsecond || b.LockWait != 1500*time.Microsecond || b.PID != 4 ||
		!strings.HasSuffix(b.SQL, "FROM orders\nWHERE id = 1") || b.TraceParent.String() != "00-11111111111111111111111111111111-2222222222222222-01" {
		t.Errorf("second: %v", b)
	}
	if !a.Start.IsZero() || !b.End.IsZero() {
		t.Errorf("slow-log statements are placed (%v, %v); their times are whole seconds", a.Start, b.End)
	}
}

func TestReadMySQLSlowLogErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"# User@Host: a\n# Query_time: x  Lock_time: 0\nSELECT 1;\n", "slow.log: line 2: Query_time \"x\""},
		{"# User@Host: a\n# Thread_id: 3\nSELECT 1;\n", "slow.log: line 1: a statement without a \"# Query_time:\" line"},
		{"# Query_time: -1\nSELECT 1;\n", "want non-negative decimal seconds"},
	} {
		err := dbwait.ReadMySQLSlowLog("slow.log", strings.NewReader(tt.in), func(pglog.Statement) {})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.want)
		}
	}
	for _, in := range []string{"", "mariadbd, Version: 10.11.19-MariaDB-log (Debian 12). started with:\n", `{"timestamp":"x","message":"duration: 1 ms"}` + "\n"} {
		err := dbwait.ReadMySQLSlowLog("slow.log", strings.NewReader(in), func(pglog.Statement) {})
		if err == nil || !strings.Contains(err.Error(), "slow.log: no statement in it") || !strings.Contains(err.Error(), "long_query_time = 0") {
			t.Errorf("%q: %v, want an error saying how to log every statement", in, err)
		}
	}
}

func FuzzReadMySQLSlowLog(f *testing.F) {
	f.Add(slowLog)
	f.Add("# Query_time: 1\nSELECT 1;")
	f.Fuzz(func(t *testing.T, in string) {
		check := func(s pglog.Statement) {
			if s.Duration < 0 || s.SQL == "" {
				t.Fatalf("statement %v from %q", s, in)
			}
		}
		if err := dbwait.ReadMySQLSlowLog("fuzz.log", strings.NewReader(in), check); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error on several lines: %q", err)
		}
		// with a small limit, long statements are skipped, at offsets in the input
		last := int64(-1)
		dbwait.ReadMySQLSlowLogOptions("fuzz.log", strings.NewReader(in), func(s pglog.Statement) {
			check(s)
			if len(s.SQL) > 16 {
				t.Fatalf("a statement of %d bytes read with a limit of 16", len(s.SQL))
			}
		}, dbwait.ReadOptions{MaxRecordBytes: 16, Skip: func(off int64) {
			if off <= last || off >= int64(len(in)) {
				t.Fatalf("skipped at %d after %d, of %d bytes", off, last, len(in))
			}
			last = off
		}})
	})
}
