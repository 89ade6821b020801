package agent_test

import (
	"database/sql"
	"database/sql/driver"
	"log"
	"net/http"

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

// database/sql: wrap the driver's connector; every query gets a region and
// a comment. With pgx's database/sql driver, the connector is
// stdlib.GetConnector(*cfg), with cfg.DefaultQueryExecMode =
// pgx.QueryExecModeExec (docs/agent.md, "SQL comments and the statement
// cache").
func ExampleWrapConnector() {
	var connector driver.Connector // your driver's
	db := sql.OpenDB(agent.WrapConnector(connector))
	defer db.Close()
}
