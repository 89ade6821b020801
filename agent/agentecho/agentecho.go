// Package agentecho names the agent's request tasks by echo route
// (github.com/labstack/echo/v4). Import it only with echo: package agent
// itself links no router.
//
//	e := echo.New()
//	e.Use(agentecho.Middleware(a)) // not e.Pre: echo runs Use after routing
//	e.GET("/users/:id", getUser)
//	e.Start(":8080") // not a.Handler(e)
//
// Each request is then a task named "GET /users/:id" (agent.RouteName),
// with its metrics under that route.
package agentecho

import (
	"reflect"

	"github.com/labstack/echo/v4"

	"github.com/latscope/latscope/agent"
)

// Middleware returns echo middleware that starts each request in a (its
// task, traceparent, metrics; agent.Begin) under the route echo matched
// (Context.Path). echo routes before it runs the middleware of Use, so
// this costs no search. A request no route matches is agent.NoRoute. An
// error a handler returns is written by echo's HTTPErrorHandler after the
// middleware returns, so outside the request's task.
func Middleware(a *agent.Agent) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			pattern := c.Path()
			if unrouted(c) {
				pattern = ""
			}
			r, q := a.Begin(req, agent.RouteName(req.Method, pattern))
			defer q.End()
			c.SetRequest(r)
			return next(c)
		}
	}
}

// unrouted reports whether echo matched no route for c: it then serves
// its NotFoundHandler or MethodNotAllowedHandler, and c.Path() is the
// path of the tree node where the search stopped, not a route.
func unrouted(c echo.Context) bool {
	h := c.Handler()
	if h == nil {
		return true
	}
	p := reflect.ValueOf(h).Pointer()
	return p == reflect.ValueOf(echo.NotFoundHandler).Pointer() ||
		p == reflect.ValueOf(echo.MethodNotAllowedHandler).Pointer()
}
