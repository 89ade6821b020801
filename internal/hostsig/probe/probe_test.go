package probe

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig/internal/tier"
)

// TestRunFuncLateness: RunFunc reports every wake-up, and a wake-up after
// a callback that held the probe's goroutine for longer than the period is
// late by about that hold (the deadline is one period after the previous
// wake-up, the hold ends one hold after it): at least hold − every.
func TestRunFuncLateness(t *testing.T) {
	tier.Timing(t)
	const every, hold = 5 * time.Millisecond, 30 * time.Millisecond
	var mu sync.Mutex
	var wakes []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunFunc(ctx, every, time.Millisecond, func(d time.Duration) {
			mu.Lock()
			wakes = append(wakes, d)
			n := len(wakes)
			mu.Unlock()
			if n == 2 {
				time.Sleep(hold) // the next deadline passes while the probe cannot run
			}
			if n == 4 {
				cancel()
			}
		})
	}()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(wakes) != 4 {
		t.Fatalf("%d wake-ups reported, want 4", len(wakes))
	}
	for i, d := range wakes {
		if d < 0 {
			t.Errorf("wake-up %d: lateness %v < 0", i, d)
		}
	}
	if wakes[2] < hold-every {
		t.Errorf("wake-up after a %v hold was %v late, want at least %v", hold, wakes[2], hold-every)
	}
}
