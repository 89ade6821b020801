package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// chi-routes-notask: a go-chi/chi v5 router with three routes behind three
// middlewares (chi's RequestID and Recoverer, and a closure of the
// service's own), no tasks (zero config): each route's inferred requests
// must be grouped by the handler the router dispatched to, not by the
// outermost middleware closure (issue #32). 6 clients, each cycling through
// the three routes.

func getUser(w http.ResponseWriter, r *http.Request) {
	loadUser(r.Context())
	writeItem(w, chi.URLParam(r, "id"), "user")
}

func listOrders(w http.ResponseWriter, r *http.Request) {
	loadOrders(r.Context())
	writeItem(w, "orders", 3)
}

func searchItems(w http.ResponseWriter, r *http.Request) {
	runSearch(r.Context())
	writeItem(w, "search", 0)
}

func loadUser(ctx context.Context) {
	defer svc.since("loadUser", time.Now())
	time.Sleep(2 * time.Millisecond)
}

func loadOrders(ctx context.Context) {
	defer svc.since("loadOrders", time.Now())
	time.Sleep(6 * time.Millisecond)
}

func runSearch(ctx context.Context) {
	defer svc.since("runSearch", time.Now())
	time.Sleep(12 * time.Millisecond)
}

// requestLog is the service's own middleware, a closure as services write them.
func requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", "corpus")
		next.ServeHTTP(w, r)
	})
}

func init() {
	register(&scenario{name: "chi-routes-notask", clients: 6, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "chi v5.5.0 router, three routes (2, 6, 12 ms) behind RequestID, Recoverer and a closure middleware of the service's own; zero config (no tasks); 6 clients cycling through the routes",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Note = "zero config, three routes: each route's requests grouped by its handler (routes), not by the outermost middleware (issue #32)"
			t.Terms = []TermTruth{
				{Frame: "main.loadUser", Kind: "sleep", ConfiguredMS: 2, Timer: "loadUser", Critical: true},
				{Frame: "main.loadOrders", Kind: "sleep", ConfiguredMS: 6, Timer: "loadOrders", Critical: true},
				{Frame: "main.runSearch", Kind: "sleep", ConfiguredMS: 12, Timer: "runSearch", Critical: true},
			}
			t.ClientP99Note = "6 clients and the service share 2 cores: the client's p99 holds its own scheduling after the response, which no server-side measure sees; p99 is checked against the service's timer around each request (server_routes)"
			r := chi.NewRouter()
			r.Use(serverTimer(map[string]string{"/users/7": "http main.getUser", "/orders": "http main.listOrders", "/search": "http main.searchItems"}),
				middleware.RequestID, middleware.Recoverer, requestLog)
			r.Get("/users/{id}", getUser)
			r.Get("/orders", listOrders)
			r.Get("/search", searchItems)
			url, stop, err := serve(r)
			if err != nil {
				return nil, nil, err
			}
			routes := []struct {
				name string
				do   func(context.Context) error
			}{
				{"http main.getUser", get(url+"/users/7", false)},
				{"http main.listOrders", get(url+"/orders", false)},
				{"http main.searchItems", get(url+"/search", false)},
			}
			var n atomic.Int64
			return func(ctx context.Context) error {
				r := routes[(n.Add(1)-1)%3]
				return routed(r.name, ctx, r.do)
			}, stop, nil
		}})
}

// serverTimer is the service's timer around each request, by path: the
// truth's server side per route for a service without tasks (no task, no
// trace event: only the clock is read).
func serverTimer(routes map[string]string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer svc.since("serverroute:"+routes[r.URL.Path], time.Now())
			next.ServeHTTP(w, r)
		})
	}
}
