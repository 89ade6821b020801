package agentmux_test

import (
	"log"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentmux"
)

// A gorilla/mux service: the middleware goes in Use, and the router is
// served as it is. Requests are tasks "GET /users/{id}".
func Example() {
	a, err := agent.New(agent.DefaultOptions)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	r := mux.NewRouter()
	r.Use(agentmux.Middleware(a))
	r.HandleFunc("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(mux.Vars(r)["id"]))
	}).Methods("GET")
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", r))
}
