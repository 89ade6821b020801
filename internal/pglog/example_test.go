package pglog_test

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/pglog"
)

// A pgx query in QueryExecModeExec logs parse, bind and execute lines; a
// table-lock wait lands in the parse line, and log_lock_waits names the
// blocker. Statements sums the three and attaches the wait.
func ExampleStatements() {
	const log = `{"timestamp":"2026-12-02 14:08:00.100 UTC","pid":9459,"error_severity":"LOG","message":"process 9459 still waiting for AccessShareLock on relation 16384 of database 5 after 100.205 ms","detail":"Process holding the lock: 9457. Wait queue: 9459.","statement":"/*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT count(*) FROM t"}
{"timestamp":"2026-12-02 14:08:00.802 UTC","pid":9459,"error_severity":"LOG","message":"process 9459 acquired AccessShareLock on relation 16384 of database 5 after 802.060 ms","statement":"/*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT count(*) FROM t"}
{"timestamp":"2026-12-02 14:08:00.802 UTC","pid":9459,"error_severity":"LOG","message":"duration: 802.311 ms  parse <unnamed>: /*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT count(*) FROM t"}
{"timestamp":"2026-12-02 14:08:00.803 UTC","pid":9459,"error_severity":"LOG","message":"duration: 0.115 ms  bind <unnamed>: /*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT count(*) FROM t"}
{"timestamp":"2026-12-02 14:08:00.803 UTC","pid":9459,"error_severity":"LOG","message":"duration: 0.095 ms  execute <unnamed>: /*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT count(*) FROM t"}
`
	err := pglog.Statements(pglog.NewReader(strings.NewReader(log)), func(s pglog.Statement) {
		fmt.Printf("trace %x: %v in %d phases, %v of it waiting for pid %d\n",
			s.TraceParent.TraceID, s.Duration, s.Phases, s.LockWait, s.Blocker)
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// trace 0af7651916cd43dd8448eb211c80319c: 802.521ms in 3 phases, 802.06ms of it waiting for pid 9457
}

// Comment writes the sqlcommenter comment an agent prepends to each query.
func ExampleComment() {
	tp, _ := pglog.ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	sql := pglog.Comment(tp, "route", "/orders/{id}") + " SELECT 1"
	fmt.Println(sql)
	found, _ := pglog.FindTraceParent(sql)
	fmt.Println(found == tp)
	// Output:
	// /*route='/orders/%7Bid%7D',traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT 1
	// true
}
