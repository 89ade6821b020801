package demo

import (
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkModes drives each mode with 20 closed-model clients (the seed experiment's
// load) over real loopback HTTP and real PostgreSQL, and reports the mean
// and median latency, throughput and the process's CPU per request. The
// process also holds the clients and the upstream, so cpu-ms/req is an upper
// bound on the service's own. Run with e.g. -bench Modes -benchtime 2000x.
func BenchmarkModes(b *testing.B) {
	const clients = 20
	upURL, dbURL := deps(b)
	perMS := 0
	for _, mode := range Modes() {
		b.Run(mode.String(), func(b *testing.B) {
			svc, url := serve(b, Config{Mode: mode, UpstreamURL: upURL, DBURL: dbURL, CPUIters: perMS})
			perMS = svc.CPUIters()
			warmUp(b, url, clients)
			var mu sync.Mutex
			var latencies []time.Duration
			b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			cpu0, start := processCPU(), time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					if code, body, err := fetch(url + "/work"); code != 200 {
						b.Errorf("GET /work: %d %s %v", code, body, err)
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				latencies = append(latencies, mine...)
				mu.Unlock()
			})
			b.StopTimer()
			elapsed, cpu := time.Since(start), processCPU()-cpu0
			reportLatencies(b, latencies, elapsed, cpu)
		})
	}
}

// warmUp makes n concurrent requests, so the upstream connections are dialled
// before the measurement.
func warmUp(b *testing.B, url string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if code, body, err := fetch(url + "/work"); code != 200 {
				b.Errorf("warm-up GET /work: %d %s %v", code, body, err)
			}
		})
	}
	wg.Wait()
}

func reportLatencies(b *testing.B, l []time.Duration, elapsed, cpu time.Duration) {
	if len(l) == 0 {
		return
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/float64(len(l)), "mean-ms")
	b.ReportMetric(ms(l[len(l)/2]), "p50-ms")
	b.ReportMetric(ms(l[len(l)*99/100]), "p99-ms")
	b.ReportMetric(float64(len(l))/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(cpu)/float64(len(l)), "cpu-ms/req")
}

// processCPU is the user+system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
