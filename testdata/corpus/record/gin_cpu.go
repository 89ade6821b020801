package main

import (
	"context"
	"math"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gin-gonic/gin"

	"github.com/latscope/latscope/testdata/corpus/pricing"
)

// gin-cpu: a gin v1.12.0 router in release mode (gin.Recovery, a task per
// request named by c.FullPath()) whose handler loads a cart for 2 ms (a
// sleep), then prices it with pricing.Compute: CPU-bound work that never
// blocks, calibrated at start to 3 ms of the thread's CPU time (issue #36:
// a gin service's pricing.Compute showed only as "running"). 2 clients.
// The CPU profiler runs during the trace, as latscope capture runs it, so
// the trace carries CPU samples; the profile is kept beside the trace
// (NAME.pprof). The service's own timers are the truth: the wall time of
// each call, and its CPU time from the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID) read before and after it on the same thread.
//
// gin-cpu-loaded is the same with a CPU burner per core (a shell loop at
// nice 0, as `while :; do :; done`) from before the warm-up to after the
// window; gin-cpu-half prices with half the rounds (1.5 ms), the change
// `scale=pricing.Compute:0.5` predicts; gin-cpu-half-loaded is that change
// with a burner per core, as gin-cpu-loaded.

// computeCPU is the CPU time pricing.Compute is calibrated to.
const computeCPU = 3 * time.Millisecond

// threadCPU reads the calling thread's CPU clock. A raw system call: the
// scheduler does not see it, so the trace holds no event of the timer.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

var (
	calMu     sync.Mutex
	calRounds = map[time.Duration]int{}
)

// roundsFor returns how many rounds of pricing.Compute take cpu of the
// thread's CPU time here: the median of 15 timed runs, on one thread,
// once per process (the variants share it).
func roundsFor(cpu time.Duration) int {
	calMu.Lock()
	defer calMu.Unlock()
	if n, ok := calRounds[cpu]; ok {
		return n
	}
	const probe = 2000
	var per []float64
	for len(per) < 15 {
		tid := syscall.Gettid()
		c0 := threadCPU()
		pricing.Compute(probe)
		c1 := threadCPU()
		if syscall.Gettid() == tid {
			per = append(per, float64(c1-c0)/probe)
		}
	}
	n := int(math.Round(float64(cpu) / median(per)))
	calRounds[cpu] = n
	return n
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func loadCart(ctx context.Context) {
	defer svc.since("loadCart", time.Now())
	time.Sleep(2 * time.Millisecond)
}

// priceCart calls pricing.Compute and times it: wall time as
// "pricing.Compute", the thread's CPU time as "pricing.Compute.cpu" (when
// the goroutine stayed on one thread; else "pricing.Compute.moved").
func priceCart(rounds int) [32]byte {
	tid, c0, w0 := syscall.Gettid(), threadCPU(), time.Now()
	sum := pricing.Compute(rounds)
	c1, w1 := threadCPU(), time.Now()
	svc.add("pricing.Compute", interval{begin: w0, end: w1})
	if syscall.Gettid() == tid {
		svc.add("pricing.Compute.cpu", interval{begin: w0, end: w0.Add(c1 - c0)})
	} else {
		svc.add("pricing.Compute.moved", interval{begin: w0, end: w1})
	}
	return sum
}

// ginCPU registers one variant: the share of the calibrated work
// pricing.Compute does (1: computeCPU), and the burners beside it.
func ginCPU(name, what string, share float64, burners int) {
	register(&scenario{name: name, clients: 2, warmup: 400 * time.Millisecond, window: 1500 * time.Millisecond,
		cpuProfile: true, burners: burners, what: what,
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /api/quote/:id"
			cpuMS := share * float64(computeCPU) / 1e6
			t.Terms = []TermTruth{
				{Frame: "main.loadCart", Kind: "sleep", ConfiguredMS: 2, Timer: "loadCart", Critical: true},
				{Frame: "github.com/latscope/latscope/testdata/corpus/pricing.Compute", Kind: "running", ConfiguredMS: cpuMS, Timer: "pricing.Compute.cpu", Critical: true,
					Note: "CPU that never blocks: the configured cost is the thread's CPU time it was calibrated to; measured_ms is the thread's CPU time in each call (calls that changed thread left out), service.compute_wall_ms its wall time"},
			}
			if burners != 0 {
				// Under a burner per core every wake-up waits for a CPU:
				// the sleep's timer holds that wait, which latscope counts
				// as runnable, and the client's tail holds its own.
				t.Terms[0].Timer = ""
				t.Terms[0].Note = "no timer: under a burner per core the timer around the sleep holds the wait for a CPU after it, which latscope counts as runnable; checked against the configured 2 ms"
				t.ClientP99Note = "under a burner per core the client, in the same process, waits for a CPU after each response: its tail is its own scheduling, which no server-side measure sees"
			}
			rounds := int(math.Round(share * float64(roundsFor(computeCPU))))
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
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["compute_rounds"] = float64(rounds)
				t.Service["compute_wall_ms"], _ = meanIn(svc.get("pricing.Compute"), from, to)
				var n int
				t.Service["compute_cpu_ms"], n = meanIn(svc.get("pricing.Compute.cpu"), from, to)
				t.Service["compute_cpu_calls"] = float64(n)
				_, moved := meanIn(svc.get("pricing.Compute.moved"), from, to)
				t.Service["compute_moved_calls"] = float64(moved)
				// The calls the CPU profile saw, each counted by the share
				// of its wall time inside the profile's window: the
				// profile's CPU in pricing.Compute over this is its CPU per
				// call.
				var calls float64
				for _, x := range svc.get("pricing.Compute") {
					if d := x.end.Sub(x.begin); d > 0 {
						lo, hi := maxTime(x.begin, profileFrom), minTime(x.end, profileTo)
						if hi.After(lo) {
							calls += float64(hi.Sub(lo)) / float64(d)
						}
					}
				}
				t.Service["compute_calls_in_profile"] = round3(calls)
				t.Service["profile_s"] = round3(profileTo.Sub(profileFrom).Seconds())
			}
			return get(url+"/api/quote/7", false), stop, nil
		}})
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func init() {
	ginCPU("gin-cpu", "gin v1.12.0 router, task per route, 2 ms cart load then pricing.Compute: 3 ms of CPU that never blocks; CPU profile during the trace; 2 clients",
		1, 0)
	ginCPU("gin-cpu-loaded", "gin-cpu with a CPU burner per core (shell loops at nice 0) during warm-up and window; the service at the recorder's priority",
		1, -1)
	ginCPU("gin-cpu-half", "gin-cpu with pricing.Compute doing half the rounds (1.5 ms of CPU): the change scale=pricing.Compute:0.5 predicts",
		0.5, 0)
	ginCPU("gin-cpu-half-loaded", "gin-cpu-half with a CPU burner per core, as gin-cpu-loaded: the change scale=pricing.Compute:0.5 predicts on a busy host",
		0.5, -1)
}
