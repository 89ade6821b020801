package analysis

import (
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/kept"
)

// TestProcCPUShareProfileGap: a CPU profile stopped and started again
// inside the trace (a profiler that runs now and then) leaves a stretch
// where the Ps ran with no samples for want of a profiler, not of a CPU.
// One P spins throughout; the profiler runs for its first and last
// gapProfiled, not for the gapOff between. Before, the gap counted as
// running time the threads had no CPU for: share 0.4 and a
// running-exceeds-cpu finding on a process that had its CPU.
func TestProcCPUShareProfileGap(t *testing.T) {
	t.Parallel()
	res, share, bound := shareOf(t, kept.Trace(t, "procshare-gap", recordProfileGap))
	if res.Info.SampleGaps != 1 {
		t.Errorf("%d gaps in the samples found, want the profiler's 1", res.Info.SampleGaps)
	}
	if share+bound < 0.85 {
		t.Errorf("share %.3f ± %.3f below 0.85 for one P that had its CPU (recorded on an idle host)", share, bound)
	}
	for _, f := range findingsOf(res, budget.FindCPUMismatch) {
		t.Errorf("finding from a gap in the profiler: %s", f.Text)
	}
}

const (
	gapProfiled = 600 * time.Millisecond
	gapOff      = 1500 * time.Millisecond
)

// recordProfileGap traces one P spinning for gapProfiled with the CPU
// profiler on, gapOff with it off, and gapProfiled with it on again.
func recordProfileGap(w io.Writer) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if err := trace.Start(w); err != nil {
		return err
	}
	defer trace.Stop()
	var x uint64
	spin := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
			for i := range 10000 {
				x = x*6364136223846793005 + uint64(i)
			}
		}
	}
	for i, d := range []time.Duration{gapProfiled, gapOff, gapProfiled} {
		if i != 1 {
			if err := pprof.StartCPUProfile(io.Discard); err != nil {
				return err
			}
		}
		spin(d)
		if i != 1 {
			pprof.StopCPUProfile()
		}
	}
	if x == 42 {
		println(x)
	}
	return nil
}
