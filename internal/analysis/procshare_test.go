package analysis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/kept"
	"github.com/latscope/latscope/internal/tier"
)

// The quota the share is checked against: one P spinning under a CFS quota
// of half a CPU, enforced every shareQuotaPeriod, for shareSpin.
const (
	shareQuota       = 0.5
	shareQuotaPeriod = 20 * time.Millisecond
	shareSpin        = 1500 * time.Millisecond
	shareChildEnv    = "LATSCOPE_PROCSHARE_CHILD" // the child's trace file
)

func TestMain(m *testing.M) {
	if path := os.Getenv(shareChildEnv); path != "" {
		if err := shareChild(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcCPUShareQuota: the CPU samples' share of the Ps' running time
// (budget.TraceInfo.ProcCPUShare) against a configured truth. A process
// with GOMAXPROCS=1 spins one goroutine under a CFS quota of half a CPU:
// Go counts its P running the whole window while the kernel lets its
// threads run half of it. The trace was recorded once (kept.Trace;
// LATSCOPE_RETRACE=1 records it again, as root); the live test records anew.
func TestProcCPUShareQuota(t *testing.T) {
	t.Parallel()
	path := kept.Trace(t, "procshare-quota", func(w io.Writer) error { return recordUnderQuota(t, w) })
	checkShare(t, path)
}

// TestProcCPUShareQuotaLive is TestProcCPUShareQuota on a trace recorded now.
func TestProcCPUShareQuotaLive(t *testing.T) {
	tier.Timing(t)
	path := filepath.Join(t.TempDir(), "quota.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordUnderQuota(t, f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkShare(t, path)
}

// checkShare holds the share to the quota. From above the bound is the
// configuration's: the Ps' threads had at most the quota over the sampled
// span and one more period's worth at its edges, and the share's own bound
// (the per-thread timers). From below a host busy with other work may
// give the cgroup less than its quota, so the timing tier, which runs this
// alone, is where the lower edge is checked: within the same margins, less
// what the process's threads without a P (sysmon) took of the quota, which
// the share does not count — at most a tenth of it (the child does nothing
// but spin).
func checkShare(t *testing.T, path string) {
	t.Helper()
	res, share, bound := shareOf(t, path)
	edge := shareQuota * float64(shareQuotaPeriod) / float64(res.Info.SampledBusy)
	t.Logf("quota %.2f, its period's edge %.3f", shareQuota, edge)
	if hi := shareQuota + bound + edge; share > hi {
		t.Errorf("share %.3f above the quota's %.3f: the samples count CPU the kernel did not give", share, hi)
	}
	if lo := shareQuota*0.9 - bound - edge; share < lo {
		t.Errorf("share %.3f below %.3f: the samples lost CPU the quota gave", share, lo)
	}
	var found bool
	for _, f := range findingsOf(res, budget.FindCPUMismatch) {
		found = found || strings.Contains(f.Text, "CPU samples")
	}
	if !found {
		t.Errorf("no %s finding from the CPU samples at a share of %.2f: %v", budget.FindCPUMismatch, share, res.Warnings)
	}
}

// shareOf analyses the trace at path and returns the result and its
// share of a CPU (budget.TraceInfo.ProcCPUShare), logged; it fails the
// test when there is none.
func shareOf(t *testing.T, path string) (res *budget.Result, share, bound float64) {
	t.Helper()
	res, err := File(context.Background(), path, budget.DefaultOptions, false)
	if err != nil {
		t.Fatal(err)
	}
	share, bound, ok := res.Info.ProcCPUShare()
	if !ok {
		t.Fatalf("no share: %d CPU samples, %d with a P, sampled busy %v", res.Info.CPUSamples, res.Info.ProcSamples, time.Duration(res.Info.SampledBusy))
	}
	t.Logf("share %.3f ± %.3f (%d samples from %d threads over %v of running outside system calls, %d gap(s) left out)",
		share, bound, res.Info.ProcSamples, res.Info.SampleThreads, time.Duration(res.Info.SampledBusy), res.Info.SampleGaps)
	return res, share, bound
}

// findingsOf returns res's findings of the given kinds.
func findingsOf(res *budget.Result, kinds ...budget.FindingKind) []*budget.Finding {
	var out []*budget.Finding
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) && slices.Contains(kinds, f.Kind) {
			out = append(out, f)
		}
	}
	return out
}

// recordUnderQuota runs this test binary as a child (shareChild) in a
// cgroup of its own under the quota and copies its trace to w. It skips,
// saying why, where the machine cannot make the cgroup.
func recordUnderQuota(t *testing.T, w io.Writer) error {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: recording under a CFS quota needs root to create a cgroup")
	}
	c, err := hostsig.NewCgroup(fmt.Sprintf("latscope-procshare-%d", os.Getpid()))
	if err != nil {
		t.Skipf("SKIP: machine has no writable cpu cgroup: %v", err)
	}
	defer c.Remove()
	if err := c.SetQuota(shareQuota, shareQuotaPeriod); err != nil {
		return err
	}
	path := filepath.Join(t.TempDir(), "child.trace")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), shareChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	go2, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := c.Add(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	fmt.Fprintln(go2, "go") // the child starts once it is in the cgroup
	go2.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("child: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// shareChild is the child of recordUnderQuota: once told to go, it traces
// one P spinning for shareSpin with the CPU profiler on, so that the
// trace carries CPU samples.
func shareChild(path string) error {
	runtime.GOMAXPROCS(1)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("child: waiting to go: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		return err
	}
	if err := trace.Start(f); err != nil {
		return err
	}
	var x uint64
	for end := time.Now().Add(shareSpin); time.Now().Before(end); {
		for i := range 10000 {
			x = x*6364136223846793005 + uint64(i)
		}
	}
	trace.Stop()
	pprof.StopCPUProfile()
	if x == 42 {
		fmt.Println(x)
	}
	return f.Close()
}
