package tcpproxy

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// Dir is the direction of a chunk through the proxy.
type Dir uint8

// The directions.
const (
	ToServer Dir = 1 // from the client to the upstream: passed on at once
	ToClient Dir = 2 // from the upstream to the client: held for the delay
)

// String is the direction's name in the log format: to-server or to-client.
func (d Dir) String() string {
	switch d {
	case ToServer:
		return "to-server"
	case ToClient:
		return "to-client"
	}
	return fmt.Sprintf("Dir(%d)", uint8(d))
}

// An Event is one chunk the proxy passed on, as its own clock saw it
// (Options.Log). Read and Written are CLOCK_MONOTONIC since boot, the clock
// of Go execution-trace timestamps and of hostsig.Sample.Mono, so a chunk
// can be placed on a service's trace.
type Event struct {
	Conn int64 // the connection, numbered from 1 in the order accepted
	Dir  Dir
	// TraceParent is the last traceparent the client sent on this
	// connection before the chunk was read, in a SQL comment as the agent
	// writes it (/*traceparent='00-…'*/); the zero value when none yet.
	// A to-server chunk carrying one has its own.
	TraceParent tracelog.TraceParent
	// Read is when the proxy's read of the chunk returned; Written is when
	// its write on had returned. For a to-client chunk Written − Read is the
	// proxy's hold: never less than Delay.
	Read, Written time.Duration
	Bytes         int           // the chunk's length, as written on
	Delay         time.Duration // the delay applied: 0 for to-server chunks
}

// Hold is Written − Read: how long the proxy had the chunk.
func (e Event) Hold() time.Duration { return e.Written - e.Read }

// clock converts time.Now readings to CLOCK_MONOTONIC since boot. Go's
// monotonic readings are that clock (runtime.nanotime) less an offset
// fixed at process start, so differences between them are exact and one
// reading of the clock itself places them all.
type clock struct {
	now  time.Time     // a time.Now reading
	mono time.Duration // CLOCK_MONOTONIC at now
}

// newClock reads CLOCK_MONOTONIC between two time.Now readings and takes
// their midpoint, so the offset is off by at most half the bracket (a few
// µs when the thread is not preempted between them).
func newClock() (clock, error) {
	t0 := time.Now()
	m, err := hostsig.Monotonic()
	t1 := time.Now()
	if err != nil {
		return clock{}, fmt.Errorf("tcpproxy: Log needs the monotonic clock: %w", err)
	}
	return clock{now: t0.Add(t1.Sub(t0) / 2), mono: m}, nil
}

// at is t on CLOCK_MONOTONIC.
func (c clock) at(t time.Time) time.Duration { return c.mono + t.Sub(c.now) }

// connLog is one connection's logging state; nil when Options.Log is nil.
type connLog struct {
	id    int64
	log   func(Event)
	clock clock
	scan  tpScanner                            // the client's stream; used by its goroutine only
	tp    atomic.Pointer[tracelog.TraceParent] // the last traceparent scanned, read by the reply side
}

// current is the connection's last traceparent, zero when none yet.
func (l *connLog) current() tracelog.TraceParent {
	if p := l.tp.Load(); p != nil {
		return *p
	}
	return tracelog.TraceParent{}
}

// clientChunk scans a chunk from the client for a traceparent before it is
// written on, so that any reply to it sees it.
func (l *connLog) clientChunk(b []byte) tracelog.TraceParent {
	if tp, ok := l.scan.scan(b); ok {
		l.tp.Store(&tp)
		return tp
	}
	return l.current()
}

// emit calls the log with one chunk.
func (l *connLog) emit(dir Dir, tp tracelog.TraceParent, read, written time.Time, n int, delay time.Duration) {
	l.log(Event{Conn: l.id, Dir: dir, TraceParent: tp, Read: l.clock.at(read), Written: l.clock.at(written), Bytes: n, Delay: delay})
}
