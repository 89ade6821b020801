package agenttest

import (
	"database/sql"
	"database/sql/driver"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Wrappers are the agent's database/sql and HTTP client wrappers
// (agent.WrapConnector, agent.Transport), which the muxes below serve
// through: this package cannot import the agent, whose own tests use it.
type Wrappers struct {
	Connector func(driver.Connector) driver.Connector
	Transport func(http.RoundTripper) http.RoundTripper
}

// The request scenario of ScenarioMux, per request.
const (
	DBFirst, DBSecond = 20 * time.Millisecond, 10 * time.Millisecond // the two DB calls of GET /db
	NoDBSleep         = 5 * time.Millisecond                         // GET /nodb
	UpstreamSleep     = 15 * time.Millisecond                        // the outbound call of GET /out
	ScenarioRequests  = 5                                            // per route
)

// openDB opens SleepConnector through w.
func openDB(t testing.TB, w Wrappers) *sql.DB {
	db := sql.OpenDB(w.Connector(SleepConnector{}))
	t.Cleanup(func() { db.Close() })
	return db
}

// ScenarioMux serves GET /db (two DB calls, the second on another
// goroutine), GET /nodb (a sleep) and GET /out (an outbound call to an
// upstream that sleeps), whose DB and outbound times the tests know.
func ScenarioMux(t testing.TB, w Wrappers) *http.ServeMux {
	db := openDB(t, w)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(UpstreamSleep)
	}))
	t.Cleanup(upstream.Close)
	client := &http.Client{Transport: w.Transport(nil)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /db", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.ExecContext(r.Context(), "sleep "+DBFirst.String()); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		var wg sync.WaitGroup
		var err error
		wg.Go(func() {
			var rows *sql.Rows
			if rows, err = db.QueryContext(r.Context(), "sleep "+DBSecond.String()); err == nil {
				rows.Close()
			}
		})
		wg.Wait()
		if err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("GET /nodb", func(w http.ResponseWriter, r *http.Request) { time.Sleep(NoDBSleep) })
	mux.HandleFunc("GET /out", func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, upstream.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		resp.Body.Close()
	})
	return mux
}

// RunScenario serves h (the agent's Handler over ScenarioMux) on an
// httptest server and sends ScenarioRequests of each of its routes.
func RunScenario(t testing.TB, h http.Handler) {
	t.Helper()
	app := httptest.NewServer(h)
	defer app.Close()
	for range ScenarioRequests {
		for _, path := range []string{"/db", "/nodb", "/out"} {
			if code, body := Get(t, app.Client(), app.URL+path); code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, code, body)
			}
		}
	}
}

// PreparedSleep is what each DB call of PreparedMux's GET /stmt sleeps.
const PreparedSleep = 10 * time.Millisecond

// PreparedMux serves GET /stmt, which runs two prepared statements: one it
// prepares under the request, and the fallback database/sql takes when the
// driver skips QueryContext (go-sql-driver/mysql with arguments); each
// sleeps PreparedSleep.
func PreparedMux(t testing.TB, w Wrappers) *http.ServeMux {
	db := openDB(t, w)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stmt", func(w http.ResponseWriter, r *http.Request) {
		st, err := db.PrepareContext(r.Context(), "sleep "+PreparedSleep.String())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer st.Close()
		if _, err := st.ExecContext(r.Context(), 1); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		rows, err := db.QueryContext(r.Context(), "sleep "+PreparedSleep.String(), 1) // skipped, then prepared
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		rows.Close()
	})
	return mux
}

// BenchMux serves GET /db (one DB call that returns at once) and GET /nodb.
func BenchMux(t testing.TB, w Wrappers) *http.ServeMux {
	db := openDB(t, w)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /db", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.ExecContext(r.Context(), "SELECT 1"); err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("GET /nodb", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	return mux
}

// DocRequest is one request of DocExampleMux's: what is sent, the route
// the agent must name it by, and the body it gets.
type DocRequest struct{ Method, Path, Route, Body string }

// DocExampleMux is the application mux of docs/metrics.md's example, and
// the requests the tests send to it (the last matches no route: noRoute is
// agent.NoRoute).
func DocExampleMux(noRoute string) (*http.ServeMux, []DocRequest) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello " + r.PathValue("name"))) })
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("user " + r.PathValue("id"))) })
	mux.HandleFunc("POST /items/{sku}/stock", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("item " + r.PathValue("sku"))) })
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	return mux, []DocRequest{
		{"GET", "/hello/ann", "GET /hello/{name}", "hello ann"},
		{"GET", "/users/42", "GET /users/{id}", "user 42"},
		{"POST", "/items/x7/stock", "POST /items/{sku}/stock", "item x7"},
		{"GET", "/status", "GET /status", "ok"},
		{"GET", "/nope", noRoute, "404 page not found\n"},
	}
}

// Send sends each request n times to srv and checks the bodies.
func Send(t testing.TB, c *http.Client, base string, reqs []DocRequest, n int) {
	t.Helper()
	for range n {
		for _, s := range reqs {
			req, _ := http.NewRequest(s.Method, base+s.Path, nil)
			code, b := do(t, c, req)
			if string(b) != s.Body {
				t.Fatalf("%s %s: %d %q, want %q", s.Method, s.Path, code, b, s.Body)
			}
		}
	}
}
