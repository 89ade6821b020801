// Package agentgin names the agent's request tasks by gin route
// (github.com/gin-gonic/gin). Import it only with gin: package agent itself
// links no router.
//
//	r := gin.New()
//	r.Use(agentgin.Middleware(a)) // first, before any route
//	r.GET("/users/:id", getUser)
//	r.Run(":8080") // not a.Handler(r)
//
// Each request is then a task named "GET /users/:id" (agent.RouteName),
// with its metrics under that route.
package agentgin

import (
	"github.com/gin-gonic/gin"

	"github.com/latscope/latscope/agent"
)

// Middleware returns gin middleware that starts each request in a (its
// task, traceparent, metrics; agent.Begin) under the route gin matched
// (Context.FullPath). gin routes before it runs middleware, so this costs
// no search. A request no route matches (gin's 404 and 405 handlers run the
// engine's middleware too) is agent.NoRoute. Register it first, before any
// route: gin gives a route the middleware registered before it.
func Middleware(a *agent.Agent) gin.HandlerFunc {
	return func(c *gin.Context) {
		r, q := a.Begin(c.Request, agent.RouteName(c.Request.Method, c.FullPath()))
		defer q.End()
		c.Request = r
		c.Next()
	}
}
