package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"syscall"
	"time"
)

// wal-batcher: a pipelined server, like etcd's WAL. Each request hands its
// record to one goroutine that takes every record waiting, appends them to
// a temp file, makes them durable with a real fdatasync, then wakes the
// waiters; each request first decodes its entry for 2 ms (a sleep); 4 clients. No configured cost: the disk sets it, and the
// batcher's own timer around fdatasync is the truth.

type walRecord struct {
	data []byte
	done chan error
}

type wal struct {
	f   *os.File
	in  chan walRecord
	out chan struct{}
}

func (w *wal) append(ctx context.Context, data []byte) error {
	begin := time.Now()
	defer svc.since("wal.append", begin)
	r := walRecord{data: data, done: make(chan error, 1)}
	w.in <- r
	return <-r.done
}

func decodeEntry(ctx context.Context) {
	defer svc.since("decodeEntry", time.Now())
	time.Sleep(2 * time.Millisecond)
}

func (w *wal) run() {
	defer close(w.out)
	for r := range w.in {
		batch := []walRecord{r}
	more:
		for len(batch) < 64 {
			select {
			case r, ok := <-w.in:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		var err error
		for _, r := range batch {
			if _, e := w.f.Write(r.data); e != nil {
				err = e
			}
		}
		begin := time.Now()
		if e := syscall.Fdatasync(int(w.f.Fd())); e != nil {
			err = e
		}
		svc.since("fdatasync", begin)
		svc.add("batch", interval{begin: begin, end: begin.Add(time.Duration(len(batch)))})
		for _, r := range batch {
			r.done <- err
		}
	}
}

func init() {
	register(&scenario{name: "wal-batcher", clients: 4, warmup: 300 * time.Millisecond, window: 500 * time.Millisecond,
		what: "pipelined net/http server: requests handed to one goroutine that batches them behind a real fdatasync on a temp file, then wakes the waiters; each request first decodes for 2 ms (a sleep); 4 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "POST /put"
			t.Terms = []TermTruth{{Frame: "main.decodeEntry", Kind: "sleep", ConfiguredMS: 2, Timer: "decodeEntry", Critical: true},
				{Frame: "main.(*wal).append", Kind: "chan receive", Timer: "wal.append", Critical: true, Beneath: "syscall", BeneathFrame: "main.(*wal).run",
					Note: "the wait for the batch's fdatasync (and for the batch before it): the service's timer is the truth"}}
			f, err := os.CreateTemp(".", ".wal-*")
			if err != nil {
				return nil, nil, err
			}
			os.Remove(f.Name())
			w := &wal{f: f, in: make(chan walRecord, 256), out: make(chan struct{})}
			go w.run()
			mux := http.NewServeMux()
			mux.HandleFunc("POST /put", traced("POST /put", func(rw http.ResponseWriter, r *http.Request) {
				decodeEntry(r.Context())
				if err := w.append(r.Context(), make([]byte, 512)); err != nil {
					http.Error(rw, err.Error(), 500)
					return
				}
				writeItem(rw, "ok", 1)
			}))
			url, stop, err := serve(mux)
			if err != nil {
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["fdatasync_mean_ms"], _ = meanIn(svc.get("fdatasync"), from, to)
				var n, recs int
				for _, b := range svc.get("batch") {
					if !b.begin.Before(from) && !b.begin.After(to) {
						n++
						recs += int(b.end.Sub(b.begin))
					}
				}
				t.Service["batches"] = float64(n)
				if n > 0 {
					t.Service["records_per_batch"] = round3(float64(recs) / float64(n))
				}
			}
			do := func(ctx context.Context) error {
				req, err := http.NewRequestWithContext(ctx, "POST", url+"/put", http.NoBody)
				if err != nil {
					return err
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(io.Discard, resp.Body)
				return err
			}
			return do, stop, nil // the batcher stays, idle, until the program ends
		}})
}
