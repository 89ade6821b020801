// Package agentmux names the agent's request tasks by gorilla/mux path
// template (github.com/gorilla/mux). Import it only with gorilla/mux:
// package agent itself links no router.
//
//	r := mux.NewRouter()
//	r.Use(agentmux.Middleware(a))
//	agentmux.Unmatched(a, r) // optional: 404s and 405s are requests too
//	r.HandleFunc("/users/{id}", getUser).Methods("GET")
//	http.ListenAndServe(":8080", r) // not a.Handler(r)
//
// Each request is then a task named "GET /users/{id}" (agent.RouteName),
// with its metrics under that route.
package agentmux

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/latscope/latscope/agent"
)

// Middleware returns gorilla/mux middleware that starts each request in a
// (its task, traceparent, metrics; agent.Begin) under the path template of
// the route the router matched (mux.CurrentRoute). The router matches
// before it runs middleware, so this costs no search. gorilla/mux runs no
// middleware for a request that matches no route (its NotFoundHandler and
// MethodNotAllowedHandler): such requests get no task and no metrics,
// unless Unmatched makes them agent.NoRoute.
func Middleware(a *agent.Agent) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pattern := ""
			if route := mux.CurrentRoute(r); route != nil {
				pattern, _ = route.GetPathTemplate()
			}
			r, q := a.Begin(r, agent.RouteName(r.Method, pattern))
			defer q.End()
			next.ServeHTTP(w, r)
		})
	}
}

// Unmatched makes the requests r matches no route or no method for (its
// NotFoundHandler and MethodNotAllowedHandler, which run no middleware)
// requests of a too, named agent.NoRoute. It keeps the handlers r has,
// and gorilla/mux's answers (404, 405) where it has none. Call it on the
// root router after setting its own handlers, if any.
func Unmatched(a *agent.Agent, r *mux.Router) {
	nf := r.NotFoundHandler
	if nf == nil {
		nf = http.NotFoundHandler()
	}
	na := r.MethodNotAllowedHandler
	if na == nil {
		na = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
	}
	r.NotFoundHandler, r.MethodNotAllowedHandler = noRoute(a, nf), noRoute(a, na)
}

func noRoute(a *agent.Agent, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, q := a.Begin(r, agent.NoRoute)
		defer q.End()
		h.ServeHTTP(w, r)
	})
}
