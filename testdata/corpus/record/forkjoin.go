package main

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// forkjoin: the handler fans out three lookups with errgroup (3, 6 and
// 9 ms, sleeps) and joins them; the 9 ms branch is the critical path, the
// others are hidden behind it. 4 clients.

func fetchPrice(ctx context.Context) error {
	defer svc.since("fetchPrice", time.Now())
	time.Sleep(3 * time.Millisecond)
	return nil
}
func fetchStock(ctx context.Context) error {
	defer svc.since("fetchStock", time.Now())
	time.Sleep(6 * time.Millisecond)
	return nil
}
func fetchReviews(ctx context.Context) error {
	defer svc.since("fetchReviews", time.Now())
	time.Sleep(9 * time.Millisecond)
	return nil
}

func productPage(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return fetchPrice(ctx) })
	g.Go(func() error { return fetchStock(ctx) })
	g.Go(func() error { return fetchReviews(ctx) })
	return g.Wait()
}

func init() {
	register(&scenario{name: "forkjoin", clients: 4, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "net/http handler forking three lookups with errgroup (3, 6, 9 ms) and joining them; 4 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /product/{id}"
			t.Terms = []TermTruth{
				{Frame: "main.fetchReviews", Kind: "sleep", ConfiguredMS: 9, Timer: "fetchReviews", Critical: true},
				{Frame: "main.fetchStock", Kind: "sleep", ConfiguredMS: 6, Timer: "fetchStock", Note: "hidden behind fetchReviews: goroutine time, not critical"},
				{Frame: "main.fetchPrice", Kind: "sleep", ConfiguredMS: 3, Timer: "fetchPrice", Note: "hidden behind fetchReviews: goroutine time, not critical"},
			}
			mux := http.NewServeMux()
			mux.HandleFunc("GET /product/{id}", traced("GET /product/{id}", func(w http.ResponseWriter, r *http.Request) {
				if err := productPage(r.Context()); err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
				writeItem(w, r.PathValue("id"), 1)
			}))
			url, stop, err := serve(mux)
			if err != nil {
				return nil, nil, err
			}
			return get(url+"/product/5", false), stop, nil
		}})
}
