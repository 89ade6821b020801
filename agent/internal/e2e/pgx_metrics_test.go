package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latscope/latscope/agent"
	_ "github.com/latscope/latscope/agent/agentprom" // Options.Metrics takes the registry
	"github.com/latscope/latscope/internal/tier"
)

// TestPgxMetrics: with the agent's metrics on, each pgx query under a request
// is a DB call whose time, measured from TraceQueryStart to TraceQueryEnd,
// is at least what PostgreSQL slept (pg_sleep), also when the rows are
// read and closed on another goroutine.
func TestPgxMetrics(t *testing.T) {
	tier.Timing(t)
	const sleep, requests = 20 * time.Millisecond, 3
	conn := tracedConn(t)
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /q", func(w http.ResponseWriter, r *http.Request) {
		if _, err := conn.Exec(r.Context(), "SELECT pg_sleep(0.02)"); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		rows, err := conn.Query(r.Context(), "SELECT pg_sleep(0.02)")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		done := make(chan struct{})
		go func() { // TraceQueryEnd runs here
			defer close(done)
			for rows.Next() {
			}
			rows.Close()
		}()
		<-done
	})
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()
	for range requests {
		resp, err := srv.Client().Get(srv.URL + "/q")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /q: %s", resp.Status)
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{} // name -> count, sum of route "GET /q"
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == "GET /q" && m.GetHistogram() != nil {
					got[f.GetName()] = [2]float64{float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()}
				}
			}
		}
	}
	least := (2 * requests * sleep).Seconds()
	for name, count := range map[string]float64{
		"latscope_db_call_duration_seconds": 2 * requests,
		"latscope_request_db_seconds":       requests,
	} {
		cs := got[name]
		t.Logf("%s{route=\"GET /q\"}: count %g, sum %.4f s", name, cs[0], cs[1])
		if cs[0] != count || cs[1] < least {
			t.Errorf("%s{route=\"GET /q\"}: count %g sum %.4f s, want count %g and sum at least %.3f s (pg_sleep)", name, cs[0], cs[1], count, least)
		}
	}
}
