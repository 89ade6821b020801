package span

import (
	"context"
	"sync"
	"testing"
	"time"
)

// sumObserver sums the DB calls it records.
type sumObserver struct {
	mu  sync.Mutex
	n   int
	sum time.Duration
}

func (o *sumObserver) DBCall(d time.Duration) {
	o.mu.Lock()
	o.n++
	o.sum += d
	o.mu.Unlock()
}

// TestInfoCalls: calls added from many goroutines at once all count, each
// DB call is observed once, and an Info without an observer (metrics off)
// or none at all is not metered.
func TestInfoCalls(t *testing.T) {
	const goroutines, each = 8, 1000
	obs := &sumObserver{}
	ri := &Info{Route: obs}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				ri.AddDB(time.Millisecond)
				ri.AddOutbound(2 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	dbCalls, db, outCalls, out := ri.Calls()
	const n = goroutines * each
	if dbCalls != n || db != n*time.Millisecond || outCalls != n || out != n*2*time.Millisecond {
		t.Errorf("Calls() = %d, %v, %d, %v; want %d, %v, %d, %v", dbCalls, db, outCalls, out, n, n*time.Millisecond, n, n*2*time.Millisecond)
	}
	if obs.n != n {
		t.Errorf("%d DB calls observed, want %d", obs.n, n)
	}
	for _, c := range []struct {
		name string
		ri   *Info
		want bool
	}{
		{"metrics on", ri, true},
		{"metrics off", &Info{}, false},
		{"outside a request", Of(context.Background()), false},
	} {
		if got := c.ri.Metered(); got != c.want {
			t.Errorf("%s: Metered() = %v, want %v", c.name, got, c.want)
		}
	}
}
