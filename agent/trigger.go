package agent

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/internal/quantile"
)

// slowness decides, request by request, which are slow (Options.Trigger).
// It is safe for concurrent use and takes no lock on the request path.
type slowness struct {
	t      Trigger
	routes sync.Map // route name → *latWindow (percentile trigger only)
}

func newSlowness(t Trigger) *slowness { return &slowness{t: t} }

// observe records one request of route that took d and reports whether it
// is slow, with the threshold it was held against.
func (s *slowness) observe(route string, d time.Duration) (slow bool, cut time.Duration) {
	if s.t.Threshold > 0 {
		return d > s.t.Threshold && d >= s.t.Floor, s.t.Threshold
	}
	w, ok := s.routes.Load(route)
	if !ok {
		w, _ = s.routes.LoadOrStore(route, newLatWindow(s.t.Window, s.t.Percentile))
	}
	cut = w.(*latWindow).observe(d)
	return cut > 0 && d > cut && d >= s.t.Floor, cut
}

// latWindow is a ring of the last latencies of one route and the percentile
// of them, recomputed every recomputeEvery requests.
type latWindow struct {
	lat []atomic.Int64
	n   atomic.Uint64
	cut atomic.Int64 // ns; 0 until enough requests were seen
	pct float64
	mu  sync.Mutex // serialises recomputation only
	// scratch is recompute's copy of lat (under mu).
	scratch []int64
}

// recomputeEvery is how many requests pass between two recomputations.
func (w *latWindow) recomputeEvery() uint64 { return uint64(max(len(w.lat)/10, 1)) }

func newLatWindow(size int, pct float64) *latWindow {
	return &latWindow{lat: make([]atomic.Int64, max(size, 1)), pct: pct}
}

// observe adds d and returns the threshold d is held against: the
// percentile before d was added (0: not known yet).
func (w *latWindow) observe(d time.Duration) time.Duration {
	cut := time.Duration(w.cut.Load())
	i := w.n.Add(1)
	w.lat[(i-1)%uint64(len(w.lat))].Store(int64(d))
	if i%w.recomputeEvery() == 0 {
		w.recompute(min(i, uint64(len(w.lat))))
	}
	return cut
}

// recompute sets cut to the nearest-rank percentile of the first n slots.
func (w *latWindow) recompute(n uint64) {
	if !w.mu.TryLock() {
		return // another request is at it
	}
	defer w.mu.Unlock()
	if cap(w.scratch) < int(n) {
		w.scratch = make([]int64, n)
	}
	xs := w.scratch[:n]
	for i := range xs {
		xs[i] = w.lat[i].Load()
	}
	w.cut.Store(quantile.Select(xs, w.pct/100))
}
