package main

import (
	"context"
	"net/http"
	"time"
)

// handoff: the handler hands each job to one worker goroutine over a
// channel and waits for its reply; the worker resizes for 3 ms (a sleep).
// 2 clients, so a job sometimes queues behind the other client's.

type job struct{ reply chan int }

func resize(ctx context.Context) {
	defer svc.since("resize", time.Now())
	time.Sleep(3 * time.Millisecond)
}

func worker(jobs chan job) {
	for j := range jobs {
		resize(context.Background())
		j.reply <- 1
	}
}

func submit(ctx context.Context, jobs chan job) int {
	begin := time.Now()
	defer svc.since("submit", begin)
	j := job{reply: make(chan int, 1)}
	jobs <- j
	return <-j.reply
}

func init() {
	register(&scenario{name: "handoff", clients: 2, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "net/http handler handing each job to one worker goroutine (3 ms resize) and waiting for the reply; 2 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /resize"
			t.Terms = []TermTruth{{Frame: "main.submit", Kind: "chan receive", Timer: "submit", Critical: true, Beneath: "sleep",
				Note: "the wait for the worker: its 3 ms resize (resize timer in service) plus the queue behind the other client's job"}}
			jobs := make(chan job, 16)
			go worker(jobs)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /resize", traced("GET /resize", func(w http.ResponseWriter, r *http.Request) {
				writeItem(w, "r", submit(r.Context(), jobs))
			}))
			url, stop, err := serve(mux)
			if err != nil {
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["resize_mean_ms"], _ = meanIn(svc.get("resize"), from, to)
			}
			return get(url+"/resize", false), stop, nil
		}})
}
