package htmlreport_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/sched"
)

// jvmReport is a JVM recording's report as render.Build makes it from a
// --handler analysis without the load's latencies: threads, hardware
// threads, no latencies, running and runnable zero because JFR does not
// record them, and a churn analysis.
func jvmReport(churn *sched.JVMReport, requests bool) (*render.Report, *budget.Result) {
	ms := func(x float64) render.Duration { return render.Duration(x * 1e6) }
	g := render.Group{Name: "Probe.handle", Requests: render.Requests{Count: 20, RPS: 5},
		Terms: []render.Term{{Frame: "Probe.callUpstream", Mechanism: "sun.net.www.protocol.http.HttpURLConnection.getInputStream", Kind: "network", Wait: ms(50), Critical: ms(50), FixPotential: ms(50), Requests: 20},
			{Frame: "Probe$Pool.borrow", Mechanism: "java.util.concurrent.LinkedBlockingQueue.take", Kind: "sync", Wait: ms(15), Critical: ms(15), FixPotential: ms(15), Requests: 20}},
		Regions: []render.Region{{Name: "Probe.callUpstream", Wall: ms(50), WallPct: 77, CPUSamples: 3, CPUPct: 30}, {Name: "Probe.cpuWork", CPUSamples: 7, CPUPct: 70}}}
	if requests { // the Java library's request events: latencies, paths, predictions
		g.Requests = render.Requests{Count: 20, RPS: 5, Mean: ms(80), Min: ms(70), P50: ms(78), P90: ms(90), P99: ms(99), Max: ms(99)}
		g.Coverage = render.Coverage{GoroutineSumPct: 81, CriticalPct: 81}
		g.Median = &render.Path{Task: 7, Latency: ms(78), Goroutines: 2, Segments: []render.Segment{
			{Start: 0, Dur: ms(60), Goroutine: 31, Kind: "network", Term: "Probe.callUpstream", Borrowed: true},
			{Start: ms(60), Dur: ms(18), Goroutine: 30, Kind: "sync", Term: "Probe$Pool.borrow"}}}
		g.Predictions = []render.Prediction{{Spec: "remove=Probe.callUpstream", Mean: ms(28), P99: ms(40), DeltaPct: -65, RPS: 14, Limit: "clients"}}
	}
	rep := &render.Report{Trace: render.Trace{File: "rec.jfr", Duration: ms(4000), Goroutines: 12, GOMAXPROCS: 2, CPUSamples: 40, JVM: true},
		Requests: g.Requests, Terms: g.Terms, Groups: []render.Group{g}, Outside: map[string]render.Duration{"sync": ms(30)}}
	if churn != nil {
		rep.Sched = churn
	}
	return rep, &budget.Result{Info: budget.TraceInfo{JVM: true}, Groups: []*budget.Group{{Name: g.Name, Count: 20}}}
}

// TestJVMWords checks that a JVM recording's page speaks of threads and
// says what a recording does not measure, instead of Go's goroutines,
// GOMAXPROCS and rows of zeros; and that its churn analysis is a section.
func TestJVMWords(t *testing.T) {
	churn := &sched.JVMReport{Samples: 120, Machinery: 30, Share: 0.25, Low: 0.18, High: 0.33,
		Groups:     []sched.JVMShare{{Group: sched.JVMFJIdle, Samples: 20, Share: 0.167}, {Group: sched.JVMFJSubmit, Samples: 10, Share: 0.083}},
		Thresholds: sched.DefaultThresholds}
	tests := []struct {
		name  string
		churn *sched.JVMReport
		want  []string
	}{
		{"with churn", churn, []string{"Scheduler churn", "scheduler churn: pool machinery took 25.0 %", "fork-join find work/idle", "batching: hand a task a batch"}},
		{"without churn", nil, nil},
	}
	common := []string{"12 threads", "2 hardware threads", "thread time", "Latency not measured", "Not measured: a recording has no request boundaries",
		"Not measured: JFR records waits per thread without wake-up edges", "not measured", "JDK Flight Recorder recording", "Totals over the whole recording"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, res := jvmReport(tt.churn, false)
			var b bytes.Buffer
			if err := htmlreport.Write(&b, rep, res, htmlreport.DefaultOptions); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, w := range append(common, tt.want...) {
				if !strings.Contains(page, w) {
					t.Errorf("the page does not say %q", w)
				}
			}
			for _, w := range []string{"goroutine", "GOMAXPROCS", "waiting for a P", "as the Go scheduler sees it", "mean 0.00", "Go execution trace", "whole trace"} {
				if strings.Contains(page, w) {
					t.Errorf("the page says %q, a Go term", w)
				}
			}
		})
	}
}

// TestJVMRequestWords checks the page of a recording made with the Java
// library's request events: its critical paths and predictions are shown,
// in threads, with no Go terms.
func TestJVMRequestWords(t *testing.T) {
	rep, res := jvmReport(nil, true)
	var b bytes.Buffer
	if err := htmlreport.Write(&b, rep, res, htmlreport.DefaultOptions); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{"request thread", "T30", "critical path over 2 threads", "across the hand-offs the Java library marks", "remove=Probe.callUpstream", "on the critical path of the 80.0 ms mean"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page does not say %q", w)
		}
	}
	for _, w := range []string{"goroutine", "GOMAXPROCS", "Not measured: JFR records waits per thread"} {
		if strings.Contains(page, w) {
			t.Errorf("the page says %q", w)
		}
	}
}
