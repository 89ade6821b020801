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
// busy and the JVM 57 % of them by jdk.CPULoad) and requires the demands'
// copy of the result to carry the others' share (machine − JVM) for the
// queueing model, which decides whether to charge it (queueing's
// chargeOthers), and the requests' CPU with the holds' in it, unscaled.
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
	if d.Info.OtherCPU != others || res.Info.OtherCPU != 0 {
		t.Errorf("the result's others' share %.3f (the report's %.3f); want %.3f on the demands' copy alone", d.Info.OtherCPU, res.Info.OtherCPU, others)
	}
	if d.Info.ProcBusy != res.Info.ProcBusy {
		t.Errorf("the process's CPU %d ns changed (%d): the queueing model charges it, not JFRDemands", d.Info.ProcBusy, res.Info.ProcBusy)
	}
	g, dg := res.Groups[0], d.Groups[0]
	if got, want := dg.Running.Wait, g.Running.Wait+int64(a.HeldCPU[g.Name]); got != want {
		t.Errorf("%s: the requests' CPU %d ns; want own %d + held %d", g.Name, got, g.Running.Wait, a.HeldCPU[g.Name])
	}
	if g.Running.Wait == 0 || res.Groups[0].Running.Wait != g.Running.Wait {
		t.Errorf("%s: the report's CPU %d ns changed or empty; JFRDemands must not touch it", g.Name, g.Running.Wait)
	}
}
