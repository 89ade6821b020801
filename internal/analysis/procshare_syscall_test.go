package analysis

import (
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/kept"
)

// TestProcCPUShareSyscalls: a P whose goroutine sleeps in a system call
// stays running in the trace until another P takes it, though its thread
// is off the CPU by its own choice, not waiting for one. The share must
// not count that time, nor may cpu-saturated: one goroutine spins while
// thirty sleep 2 ms at a time in nanosleep on two Ps. Before, their Ps'
// time made the share 0.52 ± 0.07 and the Ps 94 % busy, and both
// running-exceeds-cpu and cpu-saturated fired on a process that used one
// core of two and had all the CPU it asked for. (On eight Ps the share
// was 0.63 and the sampled running time 1.57× the spinner's.)
func TestProcCPUShareSyscalls(t *testing.T) {
	t.Parallel()
	res, share, _ := shareOf(t, kept.Trace(t, "procshare-syscalls", recordSyscalls))
	// The spinner is the only goroutine running for long: the sampled
	// running time is its span, a little more for the sleepers' Go code
	// between calls, the tracer and the collector.
	if span := float64(syscallSpin); float64(res.Info.SampledBusy) > 1.15*span {
		t.Errorf("sampled running time %v above 1.15× the spinner's %v: Ps held by goroutines in system calls counted as running", time.Duration(res.Info.SampledBusy), syscallSpin)
	}
	if share < 0.85 {
		t.Errorf("share %.3f below 0.85 for a process whose spinner had its CPU (recorded under the measure lock)", share)
	}
	for _, f := range findingsOf(res, budget.FindCPUMismatch, budget.FindCPUSaturated) {
		t.Errorf("finding on a process whose only off-CPU time was its own sleeps: %s", f.Text)
	}
}

const syscallSpin = 800 * time.Millisecond

// recordSyscalls traces one spinning goroutine and thirty sleeping in
// nanosleep, on two Ps, for syscallSpin with the CPU profiler on.
func recordSyscalls(w io.Writer) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	if err := trace.Start(w); err != nil {
		return err
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			ts := syscall.Timespec{Nsec: 2e6}
			for !stop.Load() {
				syscall.Nanosleep(&ts, nil)
			}
		})
	}
	var x uint64
	for end := time.Now().Add(syscallSpin); time.Now().Before(end); {
		for i := range 10000 {
			x = x*6364136223846793005 + uint64(i)
		}
	}
	stop.Store(true)
	wg.Wait()
	trace.Stop()
	if x == 42 {
		println(x)
	}
	return nil
}
