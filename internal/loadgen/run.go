package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// resultBuffer is how many results may wait for out before senders block.
const resultBuffer = 4096

// Run sends load as opts describes and calls out with each result as it
// completes (out may be nil). It returns when the run is over and every
// result has been delivered. Cancelling ctx stops the run promptly: no new
// request is sent, requests in flight are aborted and not reported, and Run
// returns an error wrapping ctx.Err(). Results delivered before are valid.
func Run(ctx context.Context, opts Options, out func(Result)) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	client, done := opts.httpClient()
	defer done()
	results := make(chan Result, resultBuffer)
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		for r := range results {
			if out != nil {
				out(r)
			}
		}
	}()
	r := newRunner(opts, client, results)
	if opts.Open() {
		r.open(ctx)
	} else {
		r.closed(ctx)
	}
	close(results)
	<-delivered
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("loadgen: run stopped after %v: %w", time.Since(r.start).Round(time.Millisecond), err)
	}
	return nil
}

// runner holds what the streams of one run share.
type runner struct {
	opts      Options
	client    *http.Client
	pacer     Pacer
	start     time.Time     // the run's time origin
	warmupEnd time.Time     // results completing before it are warm-up
	total     time.Duration // Warmup + Duration: no request is due at or after it
	results   chan<- Result
}

func newRunner(opts Options, client *http.Client, results chan<- Result) *runner {
	if opts.Method == "" {
		opts.Method = http.MethodGet
	}
	start := time.Now()
	return &runner{
		opts:      opts,
		client:    client,
		pacer:     opts.pacer(),
		start:     start,
		warmupEnd: start.Add(opts.Warmup),
		total:     opts.Warmup + opts.Duration,
		results:   results,
	}
}

// closed runs the closed model: one stream per client.
func (r *runner) closed(ctx context.Context) {
	var seq atomic.Uint64
	var wg sync.WaitGroup
	for c := range r.opts.Clients {
		wg.Go(func() { r.client1(ctx, c, &seq) })
	}
	wg.Wait()
}

// client1 is one closed-model client: send, wait for the answer, deliver
// it, think, repeat.
func (r *runner) client1(ctx context.Context, id int, seq *atomic.Uint64) {
	w := newWaiter()
	defer w.stop()
	var last time.Duration
	for n := uint64(0); ; n++ {
		due := r.pacer.Due(n, last)
		if due >= r.total {
			return
		}
		intended := r.start.Add(due)
		if !w.until(ctx, intended) || r.over() {
			return
		}
		s := seq.Add(1) - 1
		res, ok := r.send(ctx, intended)
		if !ok {
			return
		}
		res.Seq, res.Client = s, id
		r.results <- res
		last = time.Since(r.start)
	}
}

// open runs the open model: one stream that does not wait for answers,
// with at most MaxInFlight requests outstanding. A request is late if it
// waited for a slot, or was due while the stream was still catching up
// after such a wait.
func (r *runner) open(ctx context.Context) {
	slots := make(chan int, r.opts.MaxInFlight)
	for i := range r.opts.MaxInFlight {
		slots <- i
	}
	end, cancel := context.WithDeadline(ctx, r.start.Add(r.total))
	defer cancel()
	w := newWaiter()
	defer w.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	behind := false
	for n := uint64(0); ; n++ {
		due := r.pacer.Due(n, 0)
		if due >= r.total {
			return
		}
		intended := r.start.Add(due)
		if time.Until(intended) > 0 {
			behind = false
		}
		if !w.until(ctx, intended) {
			return
		}
		if r.over() {
			r.drop(n)
			return
		}
		slot, waited, ok := acquire(end, slots)
		if !ok {
			if ctx.Err() == nil {
				r.drop(n)
			}
			return
		}
		behind = behind || waited
		late := behind
		wg.Go(func() {
			res, ok := r.send(ctx, intended)
			slots <- slot
			if ok {
				res.Seq, res.Client, res.Late = n, slot, late
				r.results <- res
			}
		})
	}
}

// acquire takes a free in-flight slot, waiting for one until end is done;
// waited reports that none was free at once.
func acquire(end context.Context, slots chan int) (slot int, waited, ok bool) {
	select {
	case slot = <-slots:
		return slot, false, true
	default:
	}
	select {
	case slot = <-slots:
		return slot, true, true
	case <-end.Done():
		return 0, true, false
	}
}

// over reports whether the run's end has passed: nothing is sent after it.
func (r *runner) over() bool { return time.Since(r.start) >= r.total }

// maxDropped caps the dropped requests reported, so that a Pacer that never
// reaches the end cannot make Run loop forever.
const maxDropped = 1 << 20

// drop reports requests n onwards that were due before the end but never
// sent.
func (r *runner) drop(n uint64) {
	for i := 0; i < maxDropped; i, n = i+1, n+1 {
		due := r.pacer.Due(n, 0)
		if due >= r.total {
			return
		}
		intended := r.start.Add(due)
		r.results <- Result{
			Seq:      n,
			Client:   -1,
			Intended: intended.Round(0),
			Warmup:   intended.Before(r.warmupEnd),
			Dropped:  true,
		}
	}
}

// waiter sleeps until a time unless ctx is done, reusing one timer.
type waiter struct{ t *time.Timer }

func newWaiter() *waiter { return &waiter{t: time.NewTimer(never)} }

func (w *waiter) stop() { w.t.Stop() }

// until waits for t and reports whether ctx is still live.
func (w *waiter) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	w.t.Reset(d)
	select {
	case <-w.t.C:
		return true
	case <-ctx.Done():
		w.t.Stop()
		return false
	}
}
