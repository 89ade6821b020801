package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// wal-apply: a pipelined server of etcd's shape. The handler proposes its
// entry to the raft loop and waits for the apply goroutine to answer (a
// wait registry: one channel per proposal). The raft loop takes every
// proposal waiting, appends them to its WAL and makes them durable with a
// real fdatasync (under (*raftLog).sync), then hands the batch to the apply
// goroutine through a FIFO (applyc); the apply goroutine applies each entry
// and triggers its waiter. The request's wait is ended by the apply
// goroutine, which was itself waiting on the FIFO, ended by the raft loop
// that had just left fdatasync: the disk is two hand-offs away. Each
// request first decodes for 1 ms (a sleep); 4 clients.

type proposal struct {
	id   uint64
	data []byte
}

type raftLog struct{ f *os.File }

// sync makes the appended entries durable, as etcd's wal.(*WAL).sync.
func (l *raftLog) sync() error {
	begin := time.Now()
	defer svc.since("fdatasync", begin)
	return syscall.Fdatasync(int(l.f.Fd()))
}

type kvServer struct {
	log    *raftLog
	propc  chan proposal
	applyc chan []proposal
	mu     sync.Mutex
	next   uint64
	wait   map[uint64]chan error
	store  map[uint64]int
}

// propose hands an entry to the raft loop and waits until it is applied.
func (s *kvServer) propose(ctx context.Context, data []byte) error {
	begin := time.Now()
	defer svc.since("propose", begin)
	ch := make(chan error, 1)
	s.mu.Lock()
	s.next++
	id := s.next
	s.wait[id] = ch
	s.mu.Unlock()
	s.propc <- proposal{id: id, data: data}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runRaft is the raft loop: batch, append, sync, hand to apply.
func (s *kvServer) runRaft() {
	for p := range s.propc {
		batch := []proposal{p}
	more:
		for len(batch) < 64 {
			select {
			case p := <-s.propc:
				batch = append(batch, p)
			default:
				break more
			}
		}
		for _, p := range batch {
			s.log.f.Write(p.data)
		}
		err := s.log.sync()
		if err != nil {
			panic(err)
		}
		now := time.Now()
		svc.add("batch", interval{begin: now, end: now.Add(time.Duration(len(batch)))})
		s.applyc <- batch
	}
}

// runApply applies each batch in order and triggers the waiters.
func (s *kvServer) runApply() {
	for batch := range s.applyc {
		for _, p := range batch {
			s.store[p.id%128]++
			s.mu.Lock()
			ch := s.wait[p.id]
			delete(s.wait, p.id)
			s.mu.Unlock()
			if ch != nil {
				ch <- nil
			}
		}
	}
}

func decodeRequest(ctx context.Context) {
	defer svc.since("decodeRequest", time.Now())
	time.Sleep(1 * time.Millisecond)
}

func init() {
	register(&scenario{name: "wal-apply", clients: 4, warmup: 300 * time.Millisecond, window: 500 * time.Millisecond,
		what: "pipelined net/http server of etcd's shape: the handler proposes to a raft loop that batches, appends and fdatasyncs its WAL, then hands the batch through a FIFO to an apply goroutine that answers each waiter; each request first decodes for 1 ms (a sleep); 4 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "PUT /kv"
			t.ClientP99Note = "a 2 ms request's tail on 2 cores shared by 4 clients, 4 handlers, the raft and the apply loops holds the client goroutines' own wait for a CPU after the answer arrived, which the service cannot see: checked against the service's timer"
			t.Terms = []TermTruth{{Frame: "main.decodeRequest", Kind: "sleep", ConfiguredMS: 1, Timer: "decodeRequest", Critical: true},
				{Frame: "main.(*kvServer).propose", Kind: "select", Timer: "propose", Critical: true, Beneath: "syscall", BeneathFrame: "main.(*raftLog).sync",
					Note: "the wait for the apply goroutine, itself waiting on the FIFO behind the raft loop's fdatasync (and the batch before it): the service's timer is the truth"}}
			f, err := os.CreateTemp(".", ".wal-*")
			if err != nil {
				return nil, nil, err
			}
			os.Remove(f.Name())
			s := &kvServer{log: &raftLog{f: f}, propc: make(chan proposal, 256), applyc: make(chan []proposal),
				wait: map[uint64]chan error{}, store: map[uint64]int{}}
			go s.runRaft()
			go s.runApply()
			mux := http.NewServeMux()
			mux.HandleFunc("PUT /kv", traced("PUT /kv", func(rw http.ResponseWriter, r *http.Request) {
				decodeRequest(r.Context())
				if err := s.propose(r.Context(), make([]byte, 512)); err != nil {
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
				req, err := http.NewRequestWithContext(ctx, "PUT", url+"/kv", http.NoBody)
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
			return do, stop, nil
		}})
}
