package agentprom_test

import (
	"database/sql"
	"database/sql/driver"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentprom"
)

// Prometheus metrics (docs/metrics.md): per route, request latency split by
// whether the request made a DB call, its time in DB and outbound calls,
// each DB call; the host's CFS throttling, CPU pressure and steal; and the
// stall counter. Here without the flight recorder; the service serves the
// registry on /metrics itself, beside the agent's Handler. This is
// docs/metrics.md's example.
func Example() {
	reg := prometheus.NewRegistry()
	opts := agent.DefaultOptions
	opts.NoRecorder = true
	opts.Metrics = agentprom.New(reg) // or reg itself, now that agentprom is imported
	a, err := agent.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	var connector driver.Connector                   // your driver's: pgx's is stdlib.GetConnector(*cfg)
	db := sql.OpenDB(agent.WrapConnector(connector)) // DB calls are timed here
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
