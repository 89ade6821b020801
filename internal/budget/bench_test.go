package budget_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/fixture"
)

// BenchmarkAnalyze measures the loop of `latscope analyze` (tracein.Reader
// feeding budget.Analyzer, then Finalize) over one real trace. By default
// the trace is a recorded demotrace scenario of a few hundred requests; set
// LATSCOPE_BENCH_TRACE to a large trace (bash lab/bench/run.sh leaves one in
// lab/bench/out/) to measure at scale:
//
//	LATSCOPE_BENCH_TRACE=$PWD/lab/bench/out/trace-100MB.trace go test -run '^$' -bench Analyze -benchtime 1x ./internal/budget
//
// It reports MB/s from the trace size and the process's peak RSS, which also
// covers recording the default trace.
func BenchmarkAnalyze(b *testing.B) {
	path := os.Getenv("LATSCOPE_BENCH_TRACE")
	if path == "" {
		cfg := demotrace.DefaultConfig
		cfg.Clients, cfg.Requests, cfg.CPUProfile = 8, 400, true
		cfg.Upstream, cfg.DB, cfg.Locked = 2*time.Millisecond, time.Millisecond, 200*time.Microsecond
		path = fixture.Live(b, cfg).Path
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatalf("LATSCOPE_BENCH_TRACE: %v", err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fixture.AnalyzeFile(path, budget.DefaultOptions); err != nil {
			b.Fatal(err)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
}
