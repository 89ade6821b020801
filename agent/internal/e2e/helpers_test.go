package e2e

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/tracelog"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pgxConfig returns a pgx configuration for the tests' shared PostgreSQL,
// in exec mode (commented statements are unique).
func pgxConfig(t testing.TB) *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return cfg
}

// checkComment checks that the statement text PostgreSQL ran carries a
// traceparent of agenttest.JobSpan's trace that was logged inside an SQL
// region.
func checkComment(t testing.TB, evs []agenttest.Event, ran string) {
	t.Helper()
	tp, ok := pglog.FindTraceParent(ran)
	if !ok || !strings.HasPrefix(ran, "/*traceparent='") {
		t.Fatalf("PostgreSQL ran %q: want a leading sqlcommenter comment", ran)
	}
	if tp.TraceID != agenttest.JobSpan.TraceID || tp.SpanID == agenttest.JobSpan.SpanID {
		t.Errorf("comment %v: want the request's trace with a span of the query's own", tp)
	}
	for _, ev := range agenttest.Logs(evs, tracelog.SQL) {
		if ev.Message == tp.String() {
			if !agenttest.InRegion(evs, ev, tracelog.SQLRegion) {
				t.Errorf("%s log %q outside a %q region", tracelog.SQL, ev.Message, tracelog.SQLRegion)
			}
			return
		}
	}
	t.Errorf("no %s log of %v in the trace", tracelog.SQL, tp)
}
