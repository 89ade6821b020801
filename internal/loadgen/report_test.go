package loadgen

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// fixtureResults is a small fixed run: two warm-up results, eight measured
// (one late, two failed the same way, one 500), one dropped.
func fixtureResults() []Result {
	t0 := time.Date(2026, 12, 2, 16, 12, 0, 0, time.UTC)
	ms := time.Millisecond
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	return []Result{
		{Seq: 0, Intended: at(0), Latency: 30 * ms, Code: 200, BytesIn: 10, Warmup: true},
		{Seq: 1, Intended: at(5 * ms), Latency: 900 * ms, Code: 200, BytesIn: 10, Warmup: true},
		{Seq: 2, Intended: at(100 * ms), Latency: 20 * ms, Code: 200, BytesIn: 10},
		{Seq: 3, Intended: at(110 * ms), Latency: 22 * ms, Code: 200, BytesIn: 10},
		{Seq: 4, Intended: at(120 * ms), Latency: 21 * ms, Code: 200, BytesIn: 10, Late: true},
		{Seq: 5, Intended: at(130 * ms), Latency: 25 * ms, Code: 500, BytesIn: 5, Error: "500 Internal Server Error"},
		{Seq: 6, Intended: at(140 * ms), Latency: 50 * ms, Error: "context deadline exceeded"},
		{Seq: 7, Intended: at(150 * ms), Latency: 50 * ms, Error: "context deadline exceeded"},
		{Seq: 8, Intended: at(160 * ms), Latency: 23 * ms, Code: 200, BytesIn: 10},
		{Seq: 9, Intended: at(170 * ms), Latency: 30 * ms, Code: 200, BytesIn: 10},
		{Seq: 10, Client: -1, Intended: at(180 * ms), Dropped: true},
	}
}

func fixtureReport() *Report {
	var rp Report
	for _, r := range fixtureResults() {
		rp.Add(&r)
	}
	rp.Close()
	return &rp
}

func TestReport(t *testing.T) {
	rp := fixtureReport()
	ms := time.Millisecond
	checks := []struct {
		name      string
		got, want any
	}{
		{"Requests", rp.Requests, 8},
		{"Warmup", rp.Warmup, 2},
		{"Dropped", rp.Dropped, 1},
		{"Late", rp.Late, 1},
		{"Errors", rp.Errors, 3},
		{"BytesIn", rp.BytesIn, int64(55)},
		{"Window", rp.Window, 100 * ms}, // 100 ms (first intended) to 200 ms (last completion)
		{"RPS", rp.RPS, 50.0},           // 5 successful in 100 ms: failures are not throughput
		{"ErrorRPS", rp.ErrorRPS, 30.0}, // 3 failed in 100 ms
		{"Succeeded", rp.Succeeded(), 5},
		// sorted: 20 21 22 23 25 30 50 50
		{"Latency", rp.Latency, Latencies{Min: 20 * ms, Mean: 30125 * time.Microsecond, P50: 23 * ms, P90: 50 * ms, P99: 50 * ms, Max: 50 * ms}},
		{"Codes", fmt.Sprint(rp.Codes), "map[0:2 200:5 500:1]"},
		{"TopErrors", fmt.Sprint(rp.TopErrors), "[{context deadline exceeded 2} {500 Internal Server Error 1}]"},
		{"DistinctErrors", rp.DistinctErrors, 2},
		{"Percentile(75)", rp.Percentile(75), 30 * ms},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestReportCloseAgain: Close after more Adds accounts for them.
func TestReportCloseAgain(t *testing.T) {
	var rp Report
	rp.Close()
	if rp.Requests != 0 || rp.RPS != 0 || rp.Latency != (Latencies{}) {
		t.Errorf("empty report = %+v, want zeros", rp)
	}
	rp.Add(&Result{Intended: time.Unix(0, 0), Latency: 10})
	rp.Close()
	rp.Add(&Result{Intended: time.Unix(0, 0), Latency: 2})
	rp.Close()
	if rp.Latency.Min != 2 || rp.Latency.Max != 10 || rp.Requests != 2 {
		t.Errorf("after second Close: %+v, want min 2, max 10, 2 requests", rp.Latency)
	}
}

func TestReportTopErrorsBounded(t *testing.T) {
	var rp Report
	for i := range 2 * TopErrors {
		for range i + 1 {
			rp.Add(&Result{Error: fmt.Sprintf("e%02d", i)})
		}
	}
	rp.Close()
	if len(rp.TopErrors) != TopErrors || rp.DistinctErrors != 2*TopErrors || rp.TopErrors[0].Message != fmt.Sprintf("e%02d", 2*TopErrors-1) {
		t.Errorf("TopErrors = %v (distinct %d), want the %d most frequent of %d", rp.TopErrors, rp.DistinctErrors, TopErrors, 2*TopErrors)
	}
}

// BenchmarkReport measures Add and Close (sort and percentiles) over 100k
// results, the upper end of a lab run.
func BenchmarkReport(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]Result, 100_000)
	t0 := time.Unix(1e9, 0)
	for i := range rs {
		rs[i] = Result{Intended: t0.Add(time.Duration(i) * time.Millisecond), Latency: time.Duration(rng.ExpFloat64() * 20e6), Code: 200}
	}
	b.ReportAllocs()
	for b.Loop() {
		var rp Report
		for i := range rs {
			rp.Add(&rs[i])
		}
		rp.Close()
	}
}
