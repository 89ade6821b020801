package agent_test

import (
	"database/sql"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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

// Prometheus metrics (docs/metrics.md): per route, request latency split by
// whether the request made a DB call, its time in DB and outbound calls,
// each DB call; the host's CFS throttling, CPU pressure and steal; and the
// stall counter. Here without the flight recorder; the service serves the
// registry on /metrics itself, beside the agent's Handler.
func ExampleOptions_metrics() {
	reg := prometheus.NewRegistry()
	opts := agent.DefaultOptions
	opts.NoRecorder = true
	opts.Metrics = reg
	a, err := agent.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	cfg, err := pgx.ParseConfig("postgres://127.0.0.1/app")
	if err != nil {
		log.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	db := sql.OpenDB(agent.WrapConnector(stdlib.GetConnector(*cfg))) // DB calls are timed here
	defer db.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		var name string
		err := db.QueryRowContext(r.Context(), "SELECT name FROM users WHERE id = $1", r.PathValue("id")).Scan(&name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Write([]byte(name))
	})
	root := http.NewServeMux()       // scrapes stay out of the request metrics
	root.Handle("/", a.Handler(mux)) // route="GET /users/{id}": mux's pattern wins over root's "/"
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", root))
}
