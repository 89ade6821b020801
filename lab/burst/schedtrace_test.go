package burst

import (
	"bytes"
	"compress/gzip"
	"context"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/kept"
)

// schedTestdata is where the scheduler analysis's tests keep the burst
// recordings they read (internal/sched/analyze_test.go).
var schedTestdata = filepath.Join("..", "..", "internal", "sched", "testdata")

// TestRecordSchedTraces records internal/sched's kept burst recordings
// again, with LATSCOPE_RETRACE=1 only: the service run in this process
// with GOMAXPROCS 32 (as `latscope-lab burst-serve` runs it), traced with
// the CPU profiler on at 1000 Hz — spawn for 600 ms, fixed (a steady pool
// makes a small trace) for 2.4 s, for as many CPU samples — the trace
// gzipped (a goroutine per event makes 10 MB of trace a second).
func TestRecordSchedTraces(t *testing.T) {
	if !kept.Retrace() {
		t.Skipf("records internal/sched/testdata/burst-*.{trace.gz,pprof} again with %s=1", kept.RetraceEnv)
	}
	for mode, d := range map[Mode]time.Duration{Spawn: 600 * time.Millisecond, Fixed: 2400 * time.Millisecond} {
		tr, prof, err := recordSched(mode, d)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		var zb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zb, gzip.BestCompression)
		zw.Write(tr)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(schedTestdata, "burst-"+mode.String())
		if err := atomicfile.WriteString(name+".trace.gz", zb.String()); err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteString(name+".pprof", string(prof)); err != nil {
			t.Fatal(err)
		}
	}
}

// recordSched runs the service in mode for d with the tracer and the CPU
// profiler on, after a warm-up.
func recordSched(mode Mode, d time.Duration) (tr, prof []byte, err error) {
	cfg := DefaultConfig
	cfg.Mode = mode
	svc, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done; svc.Close() }()
	time.Sleep(300 * time.Millisecond) // warm-up: the pools and free lists fill
	var tb, pb bytes.Buffer
	runtime.SetCPUProfileRate(1000) // StartCPUProfile's own 100 Hz request then fails harmlessly
	if err := pprof.StartCPUProfile(&pb); err != nil {
		return nil, nil, err
	}
	if err := trace.Start(&tb); err != nil {
		pprof.StopCPUProfile()
		return nil, nil, err
	}
	time.Sleep(d)
	trace.Stop()
	pprof.StopCPUProfile()
	return tb.Bytes(), pb.Bytes(), nil
}
