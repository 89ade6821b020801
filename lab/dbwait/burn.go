package dbwait

import (
	"crypto/sha256"
	"sync"
	"time"
)

// work is the CPU-heavy part of a lookup request: d of CPU split over n
// goroutines that run while the statement is in flight, each in one tight
// loop (no yield), as a handler computing alongside its DB call would.
// It returns a function that waits for them.
func work(d time.Duration, n int) (wait func()) {
	if d <= 0 || n <= 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	each := d / time.Duration(n)
	for range n {
		wg.Go(func() { spin(each) })
	}
	return wg.Wait
}

// spin computes for about d of wall time.
func spin(d time.Duration) {
	var sum [32]byte
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 16 {
			sum = sha256.Sum256(sum[:])
		}
	}
}
