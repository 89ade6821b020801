package agentgin_test

import (
	"log"

	"github.com/gin-gonic/gin"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentgin"
)

// A gin service: the middleware goes first, before the routes. Requests
// are tasks "GET /users/:id".
func Example() {
	a, err := agent.New(agent.DefaultOptions)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	r := gin.New()
	r.Use(agentgin.Middleware(a))
	r.GET("/users/:id", func(c *gin.Context) { c.String(200, c.Param("id")) })
	log.Fatal(r.Run("127.0.0.1:8080"))
}
