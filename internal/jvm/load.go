package jvm

import (
	"time"

	"github.com/latscope/latscope/internal/loadresult"
)

// Requests are the requests a recording covers, counted from a load
// generator's results (`latscope load -o results.jsonl`): a plain value, the
// same fields as loadresult.Window, so that a caller converts one with
// Requests(w).
type Requests struct {
	Count int // requests counted: inside the window, or mostly inside it
	// Latencies are the counted requests' latencies (ns) in the order they
	// ended.
	Latencies []int64
	// EdgeCounted overlapped an edge of the window with more than half of
	// their time inside; they are in Count. Before and After overlapped the
	// start or the end with more than half outside; they are not.
	EdgeCounted, Before, After int
	Outside                    int // results entirely outside the window
	Warmup, Dropped            int // results the load generator marked so; never counted
}

// CountRequests reads results from dec and counts those inside the
// recording window [start, end): it is loadresult.CountWindow as Requests.
// Callers may call CountWindow themselves and convert; dec is a
// loadgen.Decoder, whose Result is loadresult's.
func CountRequests(dec loadresult.Decoder, start, end time.Time) (Requests, error) {
	w, err := loadresult.CountWindow(dec, start, end)
	return Requests(w), err
}
