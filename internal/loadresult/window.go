package loadresult

import (
	"fmt"
	"io"
	"sort"
	"time"
)

// Window are the requests a recording window covers, counted from a load
// generator's results (`latscope load -o results.jsonl`).
type Window struct {
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

// CountWindow reads results from dec and counts those inside the recording
// window [start, end). A decoding error is returned as dec gave it.
//
// A recording that cannot tell a request's events apart (JFR) keeps part of
// the waits of a request cut by an edge whatever is done with it. Counting
// the cut requests whose midpoint lies inside is unbiased: in a closed loop
// each client is cut once at each edge, and the inside shares of the two
// cut requests add up to one request on average.
func CountWindow(dec Decoder, start, end time.Time) (Window, error) {
	var q Window
	type ended struct {
		end time.Time
		lat int64
	}
	var done []ended
	for {
		var r Result
		err := dec(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Window{}, err
		}
		switch {
		case r.Dropped:
			q.Dropped++
			continue
		case r.Warmup:
			q.Warmup++
			continue
		}
		b := r.Start
		if b.IsZero() {
			b = r.Intended
		}
		e := r.End()
		mid := b.Add(e.Sub(b) / 2)
		switch {
		case !e.After(start) || !b.Before(end):
			q.Outside++
			continue
		case !b.Before(start) && !e.After(end):
		case mid.Before(start):
			q.Before++
			continue
		case !mid.Before(end):
			q.After++
			continue
		default:
			q.EdgeCounted++
		}
		done = append(done, ended{e, int64(r.Latency)})
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].end.Before(done[j].end) })
	for _, d := range done {
		q.Latencies = append(q.Latencies, d.lat)
	}
	q.Count = len(done)
	if q.Count == 0 {
		return q, fmt.Errorf("no result lies inside the recording (%s to %s): %d outside it, %d warm-up, %d dropped; was the load running while it recorded?",
			start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), q.Outside+q.Before+q.After, q.Warmup, q.Dropped)
	}
	return q, nil
}
