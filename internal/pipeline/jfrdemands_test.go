package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/jvm"
)

// TestJFRDemandsOthersCPU reads the kept Svc recording (internal/jfr's
// testdata/rec/svc.jfr.gz: 2 hardware threads, the machine's CPUs 95 %
// busy and the JVM 57 % of them by jdk.CPULoad) and requires its CPU
// demands to be those of the JVM's part of the cores: the CPU station sized
// at cores × (1 − the others' share), rounded to whole cores, each CPU
// demand (the requests' and the process's) scaled by that rounding, so that
// the capacity, cores over demand, is the part's.
func TestJFRDemandsOthersCPU(t *testing.T) {
	t.Parallel()
	path, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jvm.Read(context.Background(), path, rec, jvm.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	res := a.Finalize()
	others := OthersShare(a)
	_, jvmShare, machineShare, ok := a.CPULoad()
	if !ok || math.Abs(others-(machineShare-jvmShare)) > 1e-12 || others < 0.3 || others > 0.45 {
		t.Fatalf("others' share %.3f (jdk.CPULoad machine %.3f, JVM %.3f, ok %v); want machine − JVM, 0.3–0.45", others, machineShare, jvmShare, ok)
	}
	d := JFRDemands(res, a, -1)
	scale := 1 / (1 - others)
	if d.Info.Procs != res.Info.Procs || res.Info.Procs != 2 {
		t.Fatalf("CPU servers %d; want the recording's %d hardware threads, 2", d.Info.Procs, res.Info.Procs)
	}
	if got := float64(d.Info.ProcBusy) / float64(res.Info.ProcBusy); math.Abs(got-scale) > 1e-6 {
		t.Errorf("the process's CPU scaled by %.4f; want 1 / (1 − %.3f) = %.4f", got, others, scale)
	}
	g, dg := res.Groups[0], d.Groups[0]
	want := (float64(g.Running.Wait) + float64(a.HeldCPU[g.Name])) * scale
	if got := float64(dg.Running.Wait); math.Abs(got/want-1) > 1e-6 {
		t.Errorf("%s: the requests' CPU %.0f ns; want (own %d + held %d) × %.4f = %.0f", g.Name, got, g.Running.Wait, a.HeldCPU[g.Name], scale, want)
	}
	if g.Running.Wait == 0 || res.Groups[0].Running.Wait != g.Running.Wait {
		t.Errorf("%s: the report's CPU %d ns changed or empty; JFRDemands must not touch it", g.Name, g.Running.Wait)
	}
}
