package lab

import (
	"context"
	"runtime"
	"time"
)

// Sleep waits for d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Burn spins on one core until ctx is done: a CPU burner (lab --loaded
// runs one per core, as `latscope-lab burn`).
func Burn(ctx context.Context) {
	runtime.GOMAXPROCS(1)
	var x uint64
	for ctx.Err() == nil {
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	_ = x
}
