package main

import (
	"context"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// gin-mutex: a gin v1.12.0 router in release mode (gin.Recovery, a task per
// request named by c.FullPath()) whose handler fetches for 6 ms (a sleep),
// then applies the order for 1 ms (a sleep) under a shared sync.Mutex;
// 4 clients, so requests often wait for the lock.

var orderMu sync.Mutex

func fetchOrder(ctx context.Context) {
	defer svc.since("fetchOrder", time.Now())
	time.Sleep(6 * time.Millisecond)
}

func applyOrder(ctx context.Context) {
	begin := time.Now()
	orderMu.Lock()
	svc.since("orderMu.Lock", begin)
	defer orderMu.Unlock()
	defer svc.since("applyOrder", time.Now())
	time.Sleep(1 * time.Millisecond)
}

func init() {
	register(&scenario{name: "gin-mutex", clients: 4, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "gin v1.12.0 router, task per route, 6 ms fetch then a 1 ms section under a shared sync.Mutex; 4 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /api/orders/:id"
			t.Terms = []TermTruth{
				{Frame: "main.fetchOrder", Kind: "sleep", ConfiguredMS: 6, Timer: "fetchOrder", Critical: true},
				{Frame: "main.applyOrder", Kind: "sleep", ConfiguredMS: 1, Timer: "applyOrder", Critical: true},
				{Frame: "main.applyOrder", Kind: "sync", Timer: "orderMu.Lock", Critical: true, Note: "the lock wait: no configured cost, the service's timer is the truth"},
			}
			gin.SetMode(gin.ReleaseMode)
			r := gin.New()
			r.Use(gin.Recovery(), func(c *gin.Context) {
				ctx, end := task(c.Request.Context(), "GET "+c.FullPath())
				defer end()
				c.Request = c.Request.WithContext(ctx)
				c.Next()
			})
			r.GET("/api/orders/:id", func(c *gin.Context) {
				fetchOrder(c.Request.Context())
				applyOrder(c.Request.Context())
				c.JSON(200, gin.H{"id": c.Param("id"), "ok": true})
			})
			url, stop, err := serve(r)
			if err != nil {
				return nil, nil, err
			}
			return get(url+"/api/orders/9", false), stop, nil
		}})
}
