package agentecho_test

import (
	"log"

	"github.com/labstack/echo/v4"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentecho"
)

// An echo service: the middleware goes in Use (echo runs it after
// routing). Requests are tasks "GET /users/:id".
func Example() {
	a, err := agent.New(agent.DefaultOptions)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	e := echo.New()
	e.Use(agentecho.Middleware(a))
	e.GET("/users/:id", func(c echo.Context) error { return c.String(200, c.Param("id")) })
	log.Fatal(e.Start("127.0.0.1:8080"))
}
