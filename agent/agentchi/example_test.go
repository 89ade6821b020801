package agentchi_test

import (
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentchi"
)

// A chi service: the middleware goes first on the root router, and the
// router is served as it is. Requests are tasks "GET /users/{id}".
func Example() {
	a, err := agent.New(agent.DefaultOptions)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	r := chi.NewRouter()
	r.Use(agentchi.Middleware(a))
	r.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(chi.URLParam(r, "id")))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", r))
}
