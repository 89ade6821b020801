package demotrace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

var sink byte

// spin does n SHA-256 rounds.
//
//go:noinline
func spin(n int) {
	var b [32]byte
	for i := 0; i < n; i++ {
		b = sha256.Sum256(b[:])
	}
	sink ^= b[0]
}

// itersPerMs is calibrated once.
var (
	calOnce    sync.Once
	itersPerMs int
)

// ItersPerMs returns how many SHA-256 rounds take about 1 ms of CPU here.
func ItersPerMs() int {
	calOnce.Do(func() {
		best := time.Duration(1 << 62)
		const n = 2000
		for i := 0; i < 5; i++ {
			t0 := time.Now()
			spin(n)
			best = min(best, time.Since(t0))
		}
		itersPerMs = max(1, int(float64(n)*float64(time.Millisecond)/float64(best)))
	})
	return itersPerMs
}

// env is what a handler talks to.
type env struct {
	upstream string
	dbAddr   string
	client   *http.Client
	cfg      Config
	mu       sync.Mutex
	worker   chan job
	slots    chan struct{}
}

//go:noinline
func cpuWork(e *env) { spin(int(e.cfg.CPU.Milliseconds()) * ItersPerMs()) }

//go:noinline
func callUpstream(ctx context.Context, e *env) error {
	req, err := http.NewRequestWithContext(ctx, "GET", e.upstream, nil)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// queryDB does one round trip to the stand-in database over raw TCP, so
// the request goroutine itself blocks in a network read (as pgx does).
//
//go:noinline
func queryDB(e *env) error {
	c, err := net.Dial("tcp", e.dbAddr)
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "Q\n"); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

//go:noinline
func lockedSection(e *env) {
	e.mu.Lock()
	spin(int(e.cfg.Locked.Microseconds()) * ItersPerMs() / 1000)
	e.mu.Unlock()
}

// pooled holds one of a few slots (a buffered-channel semaphore) while it
// waits on the database.
//
//go:noinline
func pooled(e *env) error {
	e.slots <- struct{}{}
	defer func() { <-e.slots }()
	return queryDB(e)
}

type job struct{ done chan error }

// handoff sends the database call to a long-lived worker goroutine and
// waits for its answer.
//
//go:noinline
func handoff(e *env) error {
	j := job{done: make(chan error, 1)}
	e.worker <- j
	return <-j.done
}

//go:noinline
func workerLoop(e *env) {
	for j := range e.worker {
		j.done <- queryDB(e)
	}
}
