package main

import (
	"context"
	"net/http"
	"runtime/debug"
	"time"
)

// gc-pressure: an allocation-heavy handler (a 10 ms sleep, then 20 000 small
// objects, about 1.3 MB, built and summed) with GOGC=100 for the recording, so
// the collector runs many cycles in the window and requests assist it.
// 2 clients. Truth: the configured sleep, the collector's own counters.

type node struct {
	next *node
	val  [6]int64
}

func buildIndex(ctx context.Context) int64 {
	begin := time.Now()
	defer svc.since("buildIndex", begin)
	var head *node
	for i := range 8000 {
		head = &node{next: head, val: [6]int64{int64(i)}}
	}
	var sum int64
	for n := head; n != nil; n = n.next {
		sum += n.val[0]
	}
	return sum
}

func readConfig(ctx context.Context) {
	defer svc.since("readConfig", time.Now())
	time.Sleep(10 * time.Millisecond)
}

func init() {
	register(&scenario{name: "gc-pressure", clients: 2, warmup: 300 * time.Millisecond, window: 500 * time.Millisecond,
		what: "net/http handler: 10 ms sleep, then 8 000 small allocations (~0.5 MB) built and walked, GOGC=100; 2 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /index"
			t.Terms = []TermTruth{{Frame: "main.readConfig", Kind: "sleep", ConfiguredMS: 10, Timer: "readConfig", Critical: true},
				{Frame: "main.buildIndex", Kind: "running", Timer: "buildIndex", Critical: true, Note: "CPU: allocating and walking 8 000 nodes, GC assists included; no configured cost, the service's timer is the truth"}}
			t.Gaps = []Gap{{Issue: "#36", Term: "main.buildIndex", Text: "the trace has no CPU samples (no CPU profile ran during it), and the stacks at state changes never hold buildIndex at both ends of a running interval (it returns before the goroutine stops), so its CPU (allocation and GC assist) stays running with no frame"}}
			old := debug.SetGCPercent(100)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /index", traced("GET /index", func(w http.ResponseWriter, r *http.Request) {
				readConfig(r.Context())
				writeItem(w, "i", buildIndex(r.Context()))
			}))
			url, stop, err := serve(mux)
			if err != nil {
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["buildIndex_mean_ms"], _ = meanIn(svc.get("buildIndex"), from, to)
			}
			return get(url+"/index", false), func() { stop(); debug.SetGCPercent(old) }, nil
		}})
}
