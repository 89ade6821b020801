package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"time"

	"github.com/gin-gonic/gin"
)

// gin-cpu-sat: gin-cpu (a gin v1.12.0 router, a task per request, a 2 ms
// cart load then pricing.Compute's 3 ms of the thread's CPU) at CPU
// saturation: 8 closed-model clients on GOMAXPROCS=2, so more goroutines
// are runnable than there are processors and a request waits for a CPU
// for a large share of its latency (issue #36 §3: a queue only the
// queueing model predicts). gin-cpu-sat-half is the change made for real,
// pricing.Compute doing half the rounds, recorded right after it: under
// saturation halving the frame's CPU shortens the CPU queue too. The
// clients keep 16 idle connections per host, so no connection churns
// (the default transport keeps 2). The CPU profiler runs during the trace;
// the profile is kept beside it. Truth: the client's and the service's
// timers, and the thread's CPU clock around each pricing.Compute.

// satClients and satProcs make the CPU queue.
const (
	satClients = 8
	satProcs   = 2
)

// satClient is the clients' transport: a connection per client kept.
var satClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// getKept is the client's request over satClient, the body read to the end.
func getKept(url string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return err
		}
		resp, err := satClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}
}

// ginCPUSat registers one variant: the share of the calibrated work
// pricing.Compute does (1: computeCPU).
func ginCPUSat(name, what string, share float64) {
	register(&scenario{name: name, clients: satClients, warmup: 400 * time.Millisecond, window: 1500 * time.Millisecond,
		cpuProfile: true, what: what,
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /api/quote/:id"
			cpuMS := share * float64(computeCPU) / 1e6
			t.Terms = []TermTruth{
				{Frame: "main.loadCart", Kind: "sleep", ConfiguredMS: 2, Critical: true,
					Note: "no timer: at CPU saturation the timer around the sleep holds the wait for a CPU after it, which latscope counts as runnable; checked against the configured 2 ms from below (the sleep's timer fires late when the Ps are busy)"},
				{Frame: "github.com/latscope/latscope/testdata/corpus/pricing.Compute", Kind: "running", ConfiguredMS: cpuMS, Timer: "pricing.Compute.cpu", Critical: true,
					Note: "CPU that never blocks: the configured cost is the thread's CPU time it was calibrated to; measured_ms is the thread's CPU time in each call (calls that changed thread left out), service.compute_wall_ms its wall time"},
			}
			rounds := int(math.Round(share * float64(roundsFor(computeCPU))))
			procs := runtime.GOMAXPROCS(satProcs)
			gin.SetMode(gin.ReleaseMode)
			r := gin.New()
			r.Use(gin.Recovery(), func(c *gin.Context) {
				ctx, end := task(c.Request.Context(), "GET "+c.FullPath())
				defer end()
				c.Request = c.Request.WithContext(ctx)
				c.Next()
			})
			r.GET("/api/quote/:id", func(c *gin.Context) {
				loadCart(c.Request.Context())
				sum := priceCart(rounds)
				c.JSON(200, gin.H{"id": c.Param("id"), "total": int(sum[0])})
			})
			url, stop, err := serve(r)
			if err != nil {
				runtime.GOMAXPROCS(procs)
				return nil, nil, err
			}
			t.Note = satNote
			t.ClientP99Note = satClientNote
			post = func(t *Truth, from, to time.Time) {
				t.Service["gomaxprocs"] = satProcs
				t.Service["cpu_saturated"] = 1 // TestTruth: the client's and the sleep's bounds are not asserted (satNote)
				t.Service["compute_rounds"] = float64(rounds)
				t.Service["compute_wall_ms"], _ = meanIn(svc.get("pricing.Compute"), from, to)
				var n int
				t.Service["compute_cpu_ms"], n = meanIn(svc.get("pricing.Compute.cpu"), from, to)
				t.Service["compute_cpu_calls"] = float64(n)
				_, moved := meanIn(svc.get("pricing.Compute.moved"), from, to)
				t.Service["compute_moved_calls"] = float64(moved)
				t.Service["profile_s"] = round3(profileTo.Sub(profileFrom).Seconds())
			}
			return getKept(url + "/api/quote/7"), func() { stop(); runtime.GOMAXPROCS(procs) }, nil
		}})
}

// satNote and satClientNote say what CPU saturation does to the truth:
// TestTruth reads service.cpu_saturated and checks latscope's latency
// against the service's timer only, and the sleep against its configured
// cost from below only.
const (
	satNote       = "CPU-saturated (service.cpu_saturated): the clients run in the service's process and wait for a CPU after each response, which no server-side measure sees, so latscope's p50 and p99 are checked against the service's timer only; and Go runs a sleep's timer on a P, busy here with pricing.Compute, so the 2 ms sleep ends late (its wait is longer than configured, never shorter)"
	satClientNote = "the clients share the saturated CPUs (service.cpu_saturated): their tail holds their own wait for a CPU"
)

func init() {
	ginCPUSat("gin-cpu-sat", "gin-cpu at CPU saturation: 8 clients (16 idle connections kept) on GOMAXPROCS=2; CPU profile during the trace",
		1)
	ginCPUSat("gin-cpu-sat-half", "gin-cpu-sat with pricing.Compute doing half the rounds (1.5 ms of CPU): the change scale=pricing.Compute:0.5 predicts at CPU saturation",
		0.5)
}
