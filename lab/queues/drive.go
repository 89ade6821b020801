package queues

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/lab"
)

// Command returns a command that runs latscope with args: the lab starts
// each service, and its CPU burners, as a process of its own.
type Command func(ctx context.Context, args ...string) *exec.Cmd

// Load is what the closed-loop clients measured in the traced window.
type Load struct {
	Requests int     `json:"requests"`
	MeanMs   float64 `json:"mean_ms"`
	RPS      float64 `json:"rps"`
	// GapMs is the clients' mean time between an answer and their next
	// request: their own work, near zero unless the host's other load
	// delays them.
	GapMs float64 `json:"client_gap_ms"`
}

// measure starts the service sc as a process of its own, drives it over
// HTTP with n closed-loop clients (no think time), and records an
// execution trace of a window after the warm-up through the service's
// /debug/pprof/trace. It returns the trace and what the clients measured
// in the same window: the requests that ended in it.
func measure(ctx context.Context, cmd Command, sc ServeConfig, n int, warm, window time.Duration, name string) ([]byte, Load, error) {
	dir, err := os.MkdirTemp("", "latscope-queues-")
	if err != nil {
		return nil, Load{}, err
	}
	defer os.RemoveAll(dir)
	proc, err := lab.StartProcess(ctx, &lab.Env{Out: dir, Command: cmd}, name, sc.args()...)
	if err != nil {
		return nil, Load{}, err
	}
	defer proc.Stop()

	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var (
		mu      sync.Mutex
		results []loadgen.Result
		loadErr error
		wg      sync.WaitGroup
	)
	opts := loadgen.DefaultOptions
	opts.URL, opts.Clients, opts.Warmup, opts.Duration = proc.URL()+"/", n, warm, window+time.Minute
	wg.Go(func() {
		err := loadgen.Run(lctx, opts, func(r loadgen.Result) {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		})
		if lctx.Err() == nil {
			loadErr = err
		}
	})
	select {
	case <-time.After(warm + 100*time.Millisecond):
	case <-ctx.Done():
		stopLoad()
		wg.Wait()
		return nil, Load{}, ctx.Err()
	}
	url := fmt.Sprintf("%s/debug/pprof/trace?seconds=%g", proc.URL(), window.Seconds())
	start := time.Now()
	tr, err := fetch(ctx, url)
	end := start.Add(window)
	stopLoad()
	wg.Wait()
	if err != nil {
		return nil, Load{}, fmt.Errorf("%s: record trace: %w", name, err)
	}
	if loadErr != nil {
		return nil, Load{}, fmt.Errorf("%s: load: %w", name, loadErr)
	}
	var l Load
	var sum time.Duration
	for _, r := range results {
		if e := r.End(); r.Error == "" && !e.Before(start) && e.Before(end) {
			l.Requests++
			sum += r.Latency
		}
	}
	for _, r := range results {
		if r.Error != "" && !r.End().Before(start) && r.End().Before(end) {
			return nil, Load{}, fmt.Errorf("%s: a request failed: %s", name, r.Error)
		}
	}
	if l.Requests > 0 {
		l.MeanMs = float64(sum) / float64(l.Requests) / 1e6
		l.RPS = float64(l.Requests) / window.Seconds()
	}
	l.GapMs = clientGap(results, start, end)
	return tr, l, nil
}

// fetch GETs url and returns its body.
func fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %.200s", url, resp.Status, buf.String())
	}
	return buf.Bytes(), nil
}

// clientGap is the mean time, in ms, from a client's answer to its next
// request, over the requests sent in [start, end).
func clientGap(results []loadgen.Result, start, end time.Time) float64 {
	last := map[int]time.Time{}
	var sum time.Duration
	var n int
	sort.Slice(results, func(i, j int) bool { return results[i].Seq < results[j].Seq })
	for _, r := range results {
		if e, ok := last[r.Client]; ok && !r.Start.Before(start) && r.Start.Before(end) {
			sum += r.Start.Sub(e)
			n++
		}
		last[r.Client] = r.End()
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n) / 1e6
}
