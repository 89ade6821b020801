package loadgen

import (
	"math"
	"time"
)

// A Pacer decides when a stream's next request is due. The closed model runs
// one stream per client, each waiting for its answers; the open model runs a
// single stream that does not wait.
type Pacer interface {
	// Due returns the offset from the start of the run at which request n of
	// the stream (0 for its first) is intended to be sent. last is the offset
	// at which the stream was last ready again, its previous answer having
	// arrived and been delivered; it is 0 before the first request and always
	// 0 in the open model. A Due at or beyond the run's end ends the stream;
	// so does the end itself, and at most 2^20 unsent requests are reported
	// as dropped, so a pacer that never reaches the end still terminates.
	// Dues should not decrease as n grows; one in the past is sent at once.
	Due(n uint64, last time.Duration) time.Duration
}

// PacerFunc adapts a function to a Pacer.
type PacerFunc func(n uint64, last time.Duration) time.Duration

// Due returns f(n, last).
func (f PacerFunc) Due(n uint64, last time.Duration) time.Duration { return f(n, last) }

// ConstantPacer is the open model's pacer: Rate requests per second, request
// n due at n/Rate seconds, whatever the answers do.
type ConstantPacer struct {
	Rate float64 // requests per second
}

// never is a Due beyond any run.
const never = time.Duration(math.MaxInt64)

// Due returns n/Rate seconds, or never for a rate that is not positive.
func (p ConstantPacer) Due(n uint64, _ time.Duration) time.Duration {
	if !(p.Rate > 0) {
		return never
	}
	d := float64(n) / p.Rate * float64(time.Second)
	if d >= float64(never) {
		return never
	}
	return time.Duration(d)
}

// ClosedPacer is the closed model's pacer: a client's next request is due
// Think after it was ready again, its first one at once.
type ClosedPacer struct {
	Think time.Duration
}

// Due returns 0 for the first request and last+Think after it.
func (p ClosedPacer) Due(n uint64, last time.Duration) time.Duration {
	if n == 0 {
		return 0
	}
	if p.Think > 0 && last > never-p.Think {
		return never
	}
	return last + p.Think
}

var (
	_ Pacer = PacerFunc(nil)
	_ Pacer = ConstantPacer{}
	_ Pacer = ClosedPacer{}
)
