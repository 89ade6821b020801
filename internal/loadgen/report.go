package loadgen

import (
	"cmp"
	"slices"
	"time"
)

// TopErrors is how many error messages a Report lists.
const TopErrors = 5

// Report summarises results. Feed it with Add, then call Close to compute
// the metrics; Close may be called again after more Adds. The zero Report is
// ready to use.
type Report struct {
	Requests int   // measured results: not warm-up, not dropped
	Errors   int   // measured results with an error
	Warmup   int   // results excluded as warm-up
	Late     int   // measured results that were late (open model)
	Dropped  int   // requests never sent (open model)
	BytesIn  int64 // response bytes of measured results

	// Start and End bound the measured window: the earliest intended send
	// and the latest completion of a measured result.
	Start, End time.Time
	Window     time.Duration // End - Start
	// RPS is the throughput: successful requests (Requests - Errors) per
	// second of Window; ErrorRPS is the failed ones (Errors / Window). Both
	// are 0 if the window is empty. Failures are never counted as
	// throughput: a refused connection fails fast.
	RPS, ErrorRPS float64

	Latency Latencies   // over every measured result, failed ones included
	Codes   map[int]int // measured results by status code; 0 = no response

	TopErrors      []ErrorCount // the most frequent messages, at most TopErrors
	DistinctErrors int          // number of distinct error messages

	state reportState
}

// Latencies are exact statistics of the measured latencies.
type Latencies struct {
	Min, Mean, P50, P90, P99, Max time.Duration
}

// ErrorCount is how often one error message occurred.
type ErrorCount struct {
	Message string
	Count   int
}

// reportState is what Add accumulates and Close reads.
type reportState struct {
	latencies []time.Duration
	sorted    bool
	sum       sum
	errors    map[string]int
}

// Add accounts for one result. Negative latencies count as 0.
func (rp *Report) Add(r *Result) {
	switch {
	case r.Dropped:
		rp.Dropped++
		return
	case r.Warmup:
		rp.Warmup++
		return
	}
	st := &rp.state
	lat := max(r.Latency, 0)
	st.latencies = append(st.latencies, lat)
	st.sorted = false
	st.sum.add(lat)
	if rp.Requests == 0 || r.Intended.Before(rp.Start) {
		rp.Start = r.Intended
	}
	if end := r.Intended.Add(lat); rp.Requests == 0 || end.After(rp.End) {
		rp.End = end
	}
	rp.Requests++
	rp.BytesIn += r.BytesIn
	if r.Late {
		rp.Late++
	}
	if rp.Codes == nil {
		rp.Codes = map[int]int{}
	}
	rp.Codes[r.Code]++
	if r.Error != "" {
		rp.Errors++
		if st.errors == nil {
			st.errors = map[string]int{}
		}
		st.errors[r.Error]++
	}
}

// Close computes the window, rate, latency statistics and top errors from
// everything added so far.
func (rp *Report) Close() {
	st := &rp.state
	if !st.sorted {
		slices.Sort(st.latencies)
		st.sorted = true
	}
	rp.Window = rp.End.Sub(rp.Start)
	rp.RPS, rp.ErrorRPS = 0, 0
	if rp.Window > 0 {
		rp.RPS = float64(rp.Requests-rp.Errors) / rp.Window.Seconds()
		rp.ErrorRPS = float64(rp.Errors) / rp.Window.Seconds()
	}
	lat := st.latencies
	rp.Latency = Latencies{Mean: st.sum.mean(len(lat))}
	if len(lat) > 0 {
		rp.Latency.Min, rp.Latency.Max = lat[0], lat[len(lat)-1]
		rp.Latency.P50, rp.Latency.P90, rp.Latency.P99 = Percentile(lat, 50), Percentile(lat, 90), Percentile(lat, 99)
	}
	rp.TopErrors, rp.DistinctErrors = topErrors(st.errors, TopErrors), len(st.errors)
}

// Succeeded is the number of measured results without an error.
func (rp *Report) Succeeded() int { return rp.Requests - rp.Errors }

// Percentile returns the p-th percentile of the measured latencies as
// defined by the package function Percentile. Call it after Close.
func (rp *Report) Percentile(p float64) time.Duration {
	if !rp.state.sorted {
		rp.Close()
	}
	return Percentile(rp.state.latencies, p)
}

// topErrors returns the k most frequent messages of counts, most frequent
// first, ties in message order.
func topErrors(counts map[string]int, k int) []ErrorCount {
	all := make([]ErrorCount, 0, len(counts))
	for m, c := range counts {
		all = append(all, ErrorCount{Message: m, Count: c})
	}
	slices.SortFunc(all, func(a, b ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Message, b.Message))
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}
