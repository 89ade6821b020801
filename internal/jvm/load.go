package jvm

import (
	"time"

	"github.com/latscope/latscope/internal/loadresult"
)

// Requests are the requests a recording covers, counted from a load
// generator's results (`latscope load -o results.jsonl`): loadresult's
// Window, under the name the JVM analysis gives it.
type Requests = loadresult.Window

// CountRequests reads results from dec and counts those inside the
// recording window [start, end): loadresult.CountWindow. dec is a
// loadgen.Decoder, whose Result is loadresult's.
func CountRequests(dec loadresult.Decoder, start, end time.Time) (Requests, error) {
	return loadresult.CountWindow(dec, start, end)
}
