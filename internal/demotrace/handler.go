package demotrace

import (
	"context"
	"net/http"
	"runtime/trace"
	"sync"

	"golang.org/x/sync/errgroup"
)

// handler returns the scenario's request handler.
func handler(e *env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if e.cfg.Scenario != "notasks" {
			var task *trace.Task
			ctx, task = trace.NewTask(ctx, "request")
			defer task.End()
		}
		if err := serve(ctx, e); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	})
}

func region(ctx context.Context, name string, f func() error) error {
	var err error
	trace.WithRegion(ctx, name, func() { err = f() })
	return err
}

func serve(ctx context.Context, e *env) error {
	region(ctx, "cpu", func() error { cpuWork(e); return nil })
	var err error
	switch e.cfg.Scenario {
	case "serial", "notasks":
		if err = region(ctx, "upstream", func() error { return callUpstream(ctx, e) }); err == nil {
			err = region(ctx, "db", func() error { return queryDB(e) })
		}
	case "waitgroup":
		err = overlapWaitGroup(ctx, e)
	case "errgroup":
		err = overlapErrgroup(ctx, e)
	case "handoff":
		err = region(ctx, "db", func() error { return handoff(e) })
	case "pool":
		err = region(ctx, "db", func() error { return pooled(e) })
	case "contention":
	}
	if err != nil {
		return err
	}
	if e.cfg.Scenario != "pool" {
		region(ctx, "locked", func() error { lockedSection(e); return nil })
	}
	return nil
}

//go:noinline
func overlapWaitGroup(ctx context.Context, e *env) error {
	var wg sync.WaitGroup
	var errUp, errDB error
	wg.Add(2)
	go func() { defer wg.Done(); errUp = region(ctx, "upstream", func() error { return callUpstream(ctx, e) }) }()
	go func() { defer wg.Done(); errDB = region(ctx, "db", func() error { return queryDB(e) }) }()
	wg.Wait()
	if errUp != nil {
		return errUp
	}
	return errDB
}

//go:noinline
func overlapErrgroup(ctx context.Context, e *env) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return region(gctx, "upstream", func() error { return callUpstream(gctx, e) }) })
	g.Go(func() error { return region(gctx, "db", func() error { return queryDB(e) }) })
	return g.Wait()
}
