package agent_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/latscope/latscope/agent"
)

// A service adopts the agent in five lines: start it, wrap the mux. Slow
// requests (over the p99 of their route) leave snapshots in
// $TMPDIR/latscope-<uid> (agent.DefaultDir, private to the service's user)
// for `latscope analyze`; the endpoints serve them on loopback.
func Example() {
	opts := agent.DefaultOptions
	opts.Listen = "127.0.0.1:6061" // GET /debug/latscope/snapshots
	a, err := agent.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello " + r.PathValue("name")))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", a.Handler(mux)))
}

// Outbound calls get a region and a traceparent header.
func ExampleTransport() {
	client := &http.Client{Transport: agent.Transport(nil)}
	_ = client // use it with requests made with the request's context
}

// pgx: the tracer marks each query's start and logs its end and duration
// (on whichever goroutine closes the rows); SQLComment sends the
// traceparent in a comment. Exec mode keeps the unique, commented statements out of pgx's
// statement cache.
func ExampleQueryTracer() {
	cfg, err := pgxpool.ParseConfig("postgres://127.0.0.1/app")
	if err != nil {
		log.Fatal(err)
	}
	cfg.ConnConfig.Tracer = agent.QueryTracer{}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	var n int
	err = pool.QueryRow(context.Background(), "SELECT count(*) FROM orders WHERE id = $1", agent.SQLComment{}, 42).Scan(&n)
	_ = err
}

// database/sql: wrap the connector; every query gets a region and a comment.
func ExampleWrapConnector() {
	cfg, err := pgx.ParseConfig("postgres://127.0.0.1/app")
	if err != nil {
		log.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	db := sql.OpenDB(agent.WrapConnector(stdlib.GetConnector(*cfg)))
	defer db.Close()
}
