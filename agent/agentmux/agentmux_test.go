package agentmux_test

import (
	"net/http"
	"testing"

	"github.com/gorilla/mux"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentmux"
	"github.com/latscope/latscope/agent/internal/routertest"
)

func router(a *agent.Agent) http.Handler {
	r := mux.NewRouter()
	if a != nil {
		r.Use(agentmux.Middleware(a))
		agentmux.Unmatched(a, r)
	}
	r.HandleFunc("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("user " + mux.Vars(r)["id"]))
	}).Methods("GET")
	r.HandleFunc("/users/{id}/posts/{post:[0-9]+}", func(w http.ResponseWriter, r *http.Request) {
		v := mux.Vars(r)
		w.Write([]byte("post " + v["id"] + "/" + v["post"]))
	}).Methods("GET")
	r.HandleFunc("/items/{sku}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("item " + mux.Vars(r)["sku"]))
	}).Methods("POST")
	api := r.PathPrefix("/api").Subrouter()
	api.HandleFunc("/v/{x}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("api " + mux.Vars(r)["x"]))
	})
	return r
}

// gorilla/mux runs no middleware for a request no route matches;
// Unmatched makes its 404s and 405s (no route) requests.
var reqs = []routertest.Req{
	{Method: "GET", Path: "/users/7", Route: "GET /users/{id}", Body: "user 7"},
	{Method: "GET", Path: "/users/8/posts/9", Route: "GET /users/{id}/posts/{post:[0-9]+}", Body: "post 8/9"},
	{Method: "POST", Path: "/items/ab-1", Route: "POST /items/{sku}", Body: "item ab-1"},
	{Method: "GET", Path: "/api/v/z", Route: "GET /api/v/{x}", Body: "api z"},
	{Method: "GET", Path: "/nope", Route: agent.NoRoute, Status: 404},
	{Method: "DELETE", Path: "/users/7", Route: agent.NoRoute, Status: 405},
}

func TestRoutes(t *testing.T) {
	res := routertest.Check(t, 20, 0, reqs, router)
	t.Logf("tasks %v", res.Tasks)
}

func TestMaxRoutes(t *testing.T) {
	routertest.Check(t, 5, 2, reqs, router)
}

func TestAllocs(t *testing.T) {
	routertest.Allocs(t, router, reqs[1])
}
