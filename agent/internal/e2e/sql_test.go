package e2e

import (
	"database/sql"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
)

// TestDatabaseSQL runs the database/sql wrapper over pgx's stdlib driver
// against a real PostgreSQL.
func TestDatabaseSQL(t *testing.T) {
	tier.Timing(t)
	db := sql.OpenDB(agent.WrapConnector(stdlib.GetConnector(*pgxConfig(t))))
	defer db.Close()
	var ran, ranExec string
	evs := agenttest.Traced(t, func() {
		ctx, task := agenttest.JobContext()
		defer task.End()
		if err := db.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT current_query() WHERE $1::int = 1", 1).Scan(&ran); err != nil {
			t.Fatal(err)
		}
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE q (s text)"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO q SELECT current_query()"); err != nil {
			t.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, "SELECT s FROM q WHERE s LIKE $1")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if err := stmt.QueryRowContext(ctx, "%INSERT%").Scan(&ranExec); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})
	checkComment(t, evs, ran)
	checkComment(t, evs, ranExec)
}

// TestWrapDriver registers the wrapped driver by name.
func TestWrapDriver(t *testing.T) {
	tier.Timing(t)
	registerOnce.Do(func() { sql.Register("latscope-pgx", agent.WrapDriver(stdlib.GetDefaultDriver())) })
	db, err := sql.Open("latscope-pgx", pgtest.Shared(t).URL()+"&default_query_exec_mode=exec")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ran string
	evs := agenttest.Traced(t, func() {
		ctx, task := agenttest.JobContext()
		defer task.End()
		if err := db.QueryRowContext(ctx, "SELECT current_query()").Scan(&ran); err != nil {
			t.Fatal(err)
		}
	})
	checkComment(t, evs, ran)
}

var registerOnce sync.Once
