package agentchi_test

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentchi"
	"github.com/latscope/latscope/agent/internal/routertest"
)

func router(a *agent.Agent) http.Handler {
	r := chi.NewRouter()
	if a != nil {
		r.Use(agentchi.Middleware(a))
	}
	r.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("user " + chi.URLParam(r, "id")))
	})
	r.Get("/users/{id}/posts/{post}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("post " + chi.URLParam(r, "id") + "/" + chi.URLParam(r, "post")))
	})
	r.Post("/items/{sku}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("item " + chi.URLParam(r, "sku")))
	})
	r.Route("/api", func(r chi.Router) {
		r.Get("/v/{x}", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("api " + chi.URLParam(r, "x")))
		})
	})
	return r
}

var reqs = []routertest.Req{
	{Method: "GET", Path: "/users/7", Route: "GET /users/{id}", Body: "user 7"},
	{Method: "GET", Path: "/users/8/posts/9", Route: "GET /users/{id}/posts/{post}", Body: "post 8/9"},
	{Method: "POST", Path: "/items/ab-1", Route: "POST /items/{sku}", Body: "item ab-1"},
	{Method: "GET", Path: "/api/v/z", Route: "GET /api/v/{x}", Body: "api z"},
	{Method: "GET", Path: "/nope", Route: agent.NoRoute, Status: 404},
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
