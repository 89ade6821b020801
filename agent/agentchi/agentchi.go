// Package agentchi names the agent's request tasks by chi route pattern
// (github.com/go-chi/chi/v5). Import it only with chi: package agent
// itself links no router.
//
//	r := chi.NewRouter()
//	r.Use(agentchi.Middleware(a)) // first, before any route
//	r.Get("/users/{id}", getUser)
//	http.ListenAndServe(":8080", r) // not a.Handler(r)
//
// Each request is then a task named "GET /users/{id}" (agent.RouteName),
// with its metrics under that route.
package agentchi

import (
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/latscope/latscope/agent"
)

// Middleware returns chi middleware that starts each request in a (its
// task, traceparent, metrics; agent.Begin) under the route chi matches.
// chi runs a router's middlewares before it routes, so the middleware asks
// the router for the pattern first (chi's Routes.Find): one more search of
// the routing tree per request. A request no route matches is
// agent.NoRoute. Use it on the root router, as its first middleware.
func Middleware(a *agent.Agent) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r, q := a.Begin(r, agent.RouteName(method(r), pattern(r)))
			defer q.End()
			next.ServeHTTP(w, r)
		})
	}
}

// finders are the scratch routing contexts of Find.
var finders = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// pattern is the pattern chi will route r to ("" for none), found as
// chi's routeHTTP finds it.
func pattern(r *http.Request) string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil || rctx.Routes == nil {
		return ""
	}
	path := rctx.RoutePath
	if path == "" {
		path = r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		if path == "" {
			path = "/"
		}
	}
	f := finders.Get().(*chi.Context)
	f.Reset()
	p := rctx.Routes.Find(f, method(r), path)
	f.Reset()
	finders.Put(f)
	return p
}

// method is the method chi routes r by.
func method(r *http.Request) string {
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RouteMethod != "" {
		return rctx.RouteMethod
	}
	return r.Method
}
