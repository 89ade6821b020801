package loadreport_test

import (
	"bytes"
	"flag"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/report/loadreport"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtureReport is a small fixed run (internal/loadgen's report_test.go
// has the same): two warm-up results, eight measured (one late, two failed
// the same way, one 500), one dropped.
func fixtureReport() *loadgen.Report {
	t0 := time.Date(2026, 12, 2, 16, 12, 0, 0, time.UTC)
	ms := time.Millisecond
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var rp loadgen.Report
	for _, r := range []loadgen.Result{
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
	} {
		rp.Add(&r)
	}
	rp.Close()
	return &rp
}

// TestGolden prints the fixture run, an empty run, one with latencies too
// wide for the default columns and one where every request failed, as
// text and JSON, and compares them with the files under testdata/.
func TestGolden(t *testing.T) {
	empty := &loadgen.Report{}
	empty.Close()
	// wide: latencies too long for the default columns, one error message.
	wide := &loadgen.Report{}
	t0 := time.Date(2026, 12, 2, 16, 12, 0, 0, time.UTC)
	wide.Add(&loadgen.Result{Intended: t0, Latency: 847 * time.Microsecond, Code: 200})
	wide.Add(&loadgen.Result{Intended: t0, Latency: 30290282 * time.Microsecond, Error: "context deadline exceeded"})
	wide.Close()
	// failed: every request refused, fast; the rate of failures is not throughput.
	failed := &loadgen.Report{}
	for i := range 4 {
		failed.Add(&loadgen.Result{Intended: t0.Add(time.Duration(i) * time.Millisecond), Latency: time.Millisecond, Error: "dial tcp 127.0.0.1:1: connect: connection refused"})
	}
	failed.Close()
	writers := []struct {
		file  string
		rp    *loadgen.Report
		write func(io.Writer, *loadgen.Report) error
	}{
		{"report.txt", fixtureReport(), loadreport.WriteText},
		{"report.json", fixtureReport(), loadreport.WriteJSON},
		{"report-empty.txt", empty, loadreport.WriteText},
		{"report-empty.json", empty, loadreport.WriteJSON},
		{"report-wide.txt", wide, loadreport.WriteText},
		{"report-failed.txt", failed, loadreport.WriteText},
		{"report-failed.json", failed, loadreport.WriteJSON},
	}
	for _, r := range writers {
		t.Run(r.file, func(t *testing.T) {
			rp := r.rp
			var buf bytes.Buffer
			if err := r.write(&buf, rp); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", r.file), buf.Bytes(), *update)
		})
	}
}
