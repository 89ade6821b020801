// Package loadgen generates HTTP load and reports what it measured.
//
// It is built like tsenart/vegeta: a [Pacer] decides when requests are due,
// [Run] streams one [Result] per request as it completes, results are written
// and read by an [Encoder] and a [Decoder] (the format is sniffed on read), a
// [Report] consumes results with Add and Close, and printing it is another
// package's (internal/report/loadreport). Unlike vegeta, the closed model is
// first-class.
//
// # Models
//
// Closed model (Options.Rate == 0): Options.Clients clients each send their
// next request as soon as the previous answer arrived, after an optional think
// time. Throughput is then set by the system under test: by Little's law,
// rps = clients / (mean latency + think), up to window-edge effects.
//
// Open model (Options.Rate > 0): requests are due at a fixed rate whatever the
// answers do. Latency is measured from the intended send time, not from the
// moment the request actually left, so a stall of the server shows up in every
// request that was due during the stall (no coordinated omission). At most
// Options.MaxInFlight requests are outstanding; a request due while the bound
// is reached waits for a free slot and is marked Late (its latency still
// counts from its intended time). Requests still waiting when the run ends are
// reported as Dropped.
//
// In both models Result.Latency is the time from Result.Intended to the
// moment the whole response body was read. In the closed model the intended
// time is when the client became ready (its previous result delivered, think
// time elapsed), so Intended and Start differ only by scheduling delay.
//
// # Warm-up and the measured window
//
// A run lasts Warmup + Duration. A result that completed before the warm-up
// ended has Warmup set and is excluded from every metric of a [Report]. No
// request is sent after the run's end; requests in flight then are awaited.
// The measured window runs from the earliest intended send time to the latest
// completion among measured results, and rps is the measured count of
// successful requests divided by that window, not by the requested duration.
// Failed requests have a rate of their own (Report.ErrorRPS): they are never
// counted as throughput.
//
// # Validation
//
// [Options.Validate], which Run calls first, checks every field whichever
// model is chosen (URL and port, method, header names and values, ranges of
// the numbers and durations) and returns an [*OptionError] naming the field.
//
// # Percentiles
//
// A Report keeps every measured latency and computes exact percentiles with
// the nearest-rank method (see [Percentile]): the p-th percentile of n sorted
// values is the value at rank ceil(p/100 * n). Estimators such as vegeta's
// t-digest trade exactness for constant memory, which pays off at millions of
// samples; the lab's runs have thousands to a few hundred thousand, and
// BenchmarkReport shows that keeping and sorting them all costs milliseconds.
// Exact values also make the tests exact. Latencies of failed requests are
// included (a timeout is the worst latency there is); the error count is
// reported next to them. The mean is the exact floor of the sum over the count.
//
// # Concurrency
//
// Run calls its out function from one goroutine at a time, in completion
// order, so out may feed a Report or an Encoder without locking; out is also
// the place to drive a progress display. A Report is not safe for concurrent
// use.
package loadgen
