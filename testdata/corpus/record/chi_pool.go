package main

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// chi-pool: a go-chi/chi v5 router (middleware.Recoverer, a task per
// request named by the route) whose handler takes one of 2 slots of a
// buffered-channel pool, renders for 5 ms (a sleep) holding it, and gives
// it back; 6 clients, so most requests queue for a slot.

type slotPool struct{ slots chan struct{} }

func (p *slotPool) get(ctx context.Context) {
	begin := time.Now()
	p.slots <- struct{}{}
	svc.since("pool.get", begin)
}

func (p *slotPool) put() { <-p.slots }

func renderItem(ctx context.Context) {
	defer svc.since("renderItem", time.Now())
	time.Sleep(5 * time.Millisecond)
}

func init() {
	register(&scenario{name: "chi-pool", clients: 6, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "chi v5.5.0 router, task per route, a 2-slot buffered-channel pool held for a 5 ms render; 6 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /api/items/{id}"
			t.Terms = []TermTruth{
				{Frame: "main.(*slotPool).get", Kind: "chan send", Timer: "pool.get", Critical: true, Note: "the queue for a slot: no configured cost, the service's timer is the truth"},
				{Frame: "main.renderItem", Kind: "sleep", ConfiguredMS: 5, Timer: "renderItem", Critical: true},
			}
			pool := &slotPool{slots: make(chan struct{}, 2)}
			r := chi.NewRouter()
			r.Use(middleware.Recoverer)
			r.With(func(next http.Handler) http.Handler { return traced("GET /api/items/{id}", next.ServeHTTP) }).
				Get("/api/items/{id}", func(w http.ResponseWriter, r *http.Request) {
					pool.get(r.Context())
					renderItem(r.Context())
					pool.put()
					writeItem(w, chi.URLParam(r, "id"), 1)
				})
			url, stop, err := serve(r)
			if err != nil {
				return nil, nil, err
			}
			return get(url+"/api/items/7", false), stop, nil
		}})
}
