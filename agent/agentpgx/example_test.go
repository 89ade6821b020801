package agentpgx_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/latscope/latscope/agent/agentpgx"
)

// pgx: the tracer marks each query's start and logs its end and duration
// (on whichever goroutine closes the rows); SQLComment sends the
// traceparent in a comment. Exec mode keeps the unique, commented statements out of pgx's
// statement cache.
func ExampleQueryTracer() {
	cfg, err := pgxpool.ParseConfig("postgres://127.0.0.1/app")
	if err != nil {
		log.Fatal(err)
	}
	cfg.ConnConfig.Tracer = agentpgx.QueryTracer{}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	var n int
	err = pool.QueryRow(context.Background(), "SELECT count(*) FROM orders WHERE id = $1", agentpgx.SQLComment{}, 42).Scan(&n)
	_ = err
}
