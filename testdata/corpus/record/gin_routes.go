package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// gin-routes-notask: a gin v1.12.0 router (release mode) with three routes
// behind gin.Recovery and a closure middleware of the service's own, no
// tasks (zero config): each route's inferred requests must be grouped by
// the handler gin dispatched to, not by the middleware (issue #32). 6
// clients, each cycling through the three routes.

func ginGetUser(c *gin.Context) {
	loadUser(c.Request.Context())
	c.JSON(200, gin.H{"id": c.Param("id")})
}

func ginListOrders(c *gin.Context) {
	loadOrders(c.Request.Context())
	c.JSON(200, gin.H{"orders": 3})
}

func ginSearch(c *gin.Context) {
	runSearch(c.Request.Context())
	c.JSON(200, gin.H{"hits": 0})
}

func init() {
	register(&scenario{name: "gin-routes-notask", clients: 6, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "gin v1.12.0 router, three routes (2, 6, 12 ms) behind gin.Recovery and a closure middleware of the service's own; zero config (no tasks); 6 clients cycling through the routes",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Note = "zero config, three routes: each route's requests grouped by its handler (routes), not by the middleware (issue #32)"
			t.ClientP99Note = "6 clients and the service share 2 cores: the client's p99 holds its own scheduling after the response, which no server-side measure sees; p99 is checked against the service's timer around each request (server_routes)"
			t.Terms = []TermTruth{
				{Frame: "main.loadUser", Kind: "sleep", ConfiguredMS: 2, Timer: "loadUser", Critical: true},
				{Frame: "main.loadOrders", Kind: "sleep", ConfiguredMS: 6, Timer: "loadOrders", Critical: true},
				{Frame: "main.runSearch", Kind: "sleep", ConfiguredMS: 12, Timer: "runSearch", Critical: true},
			}
			gin.SetMode(gin.ReleaseMode)
			r := gin.New()
			r.Use(gin.Recovery(), func(c *gin.Context) {
				c.Header("X-Served-By", "corpus")
				c.Next()
			})
			r.GET("/users/:id", ginGetUser)
			r.GET("/orders", ginListOrders)
			r.GET("/search", ginSearch)
			timed := serverTimer(map[string]string{"/users/7": "http main.ginGetUser", "/orders": "http main.ginListOrders", "/search": "http main.ginSearch"})
			url, stop, err := serve(timed(r))
			if err != nil {
				return nil, nil, err
			}
			routes := []struct {
				name string
				do   func(context.Context) error
			}{
				{"http main.ginGetUser", get(url+"/users/7", false)},
				{"http main.ginListOrders", get(url+"/orders", false)},
				{"http main.ginSearch", get(url+"/search", false)},
			}
			var n atomic.Int64
			return func(ctx context.Context) error {
				r := routes[(n.Add(1)-1)%3]
				return routed(r.name, ctx, r.do)
			}, stop, nil
		}})
}

var _ http.Handler = (*gin.Engine)(nil)
