package queues

import (
	"context"
	"crypto/sha256"
	"runtime/trace"
	"sync/atomic"
	"time"
)

// Service is the lab's request handler: CPU work, a query under a pool
// connection, then an upstream call.
type Service struct {
	work   int           // sha256 rounds of CPU per request
	db, up time.Duration // query and upstream times
	pool   chan struct{} // the connection pool: a buffered-channel semaphore
	sink   atomic.Uint64
}

// newService builds a service whose requests compute for cpu (calibrated
// in CPU work, not wall time), hold one of poolSize connections for db and
// call an upstream for up.
func newService(cpu, db, up time.Duration, poolSize int, roundsPerMs float64) *Service {
	return &Service{work: int(roundsPerMs * float64(cpu) / 1e6), db: db, up: up, pool: make(chan struct{}, poolSize)}
}

// handle serves one request as a runtime/trace task named "request".
func (s *Service) handle(ctx context.Context) {
	ctx, task := trace.NewTask(ctx, "request")
	defer task.End()
	s.compute()
	s.withConn(ctx)
	if s.up > 0 {
		callUpstream(s.up)
	}
}

// compute does the request's CPU work.
func (s *Service) compute() {
	var sum [32]byte
	for range s.work {
		sum = sha256.Sum256(sum[:])
	}
	s.sink.Add(uint64(sum[0]))
}

// withConn holds a pool connection for the query.
func (s *Service) withConn(ctx context.Context) {
	s.pool <- struct{}{}
	queryDB(s.db)
	<-s.pool
}

// queryDB stands for a database round trip.
func queryDB(d time.Duration) { time.Sleep(d) }

// callUpstream stands for a call to another service.
func callUpstream(d time.Duration) { time.Sleep(d) }

// calibrate returns sha256 rounds per millisecond of CPU on this machine.
func calibrate() float64 {
	var sum [32]byte
	best := 0.0
	for range 5 {
		start := time.Now()
		n := 0
		for time.Since(start) < 20*time.Millisecond {
			for range 64 {
				sum = sha256.Sum256(sum[:])
			}
			n += 64
		}
		best = max(best, float64(n)/(float64(time.Since(start))/1e6))
	}
	_ = sum
	return best
}
