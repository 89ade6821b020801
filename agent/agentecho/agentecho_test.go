package agentecho_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentecho"
	"github.com/latscope/latscope/agent/internal/routertest"
)

func router(a *agent.Agent) http.Handler {
	e := echo.New()
	if a != nil {
		e.Use(agentecho.Middleware(a))
	}
	e.GET("/users/:id", func(c echo.Context) error { return c.String(200, "user "+c.Param("id")) })
	e.GET("/users/:id/posts/:post", func(c echo.Context) error {
		return c.String(200, "post "+c.Param("id")+"/"+c.Param("post"))
	})
	e.POST("/items/:sku", func(c echo.Context) error { return c.String(200, "item "+c.Param("sku")) })
	api := e.Group("/api")
	api.GET("/v/*", func(c echo.Context) error { return c.String(200, "api "+c.Param("*")) })
	return e
}

var reqs = []routertest.Req{
	{Method: "GET", Path: "/users/7", Route: "GET /users/:id", Body: "user 7"},
	{Method: "GET", Path: "/users/8/posts/9", Route: "GET /users/:id/posts/:post", Body: "post 8/9"},
	{Method: "POST", Path: "/items/ab-1", Route: "POST /items/:sku", Body: "item ab-1"},
	{Method: "GET", Path: "/api/v/z/w", Route: "GET /api/v/*", Body: "api z/w"},
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
