package corpus

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/whatif"
)

// satMiss is the kept pair's known miss, or "" once it holds. The pair
// kept until 5 December 2026 (recorded at 06:26 UTC at load average 4.0
// from other work on the 2 cores) missed by +70 % because the host lent
// the after recording more CPU than the before one (pricing.Compute's wall
// time 4.2× its thread CPU before, 2.4× after); the pair kept since
// (19:28 UTC, under the measure lock, no burner: 1.03× and 1.16×) holds
// with the clients' think time taken as the CPU's queue
// (queueing.Inputs.ClientsInProcess; docs/accuracy.md).
const satMiss = ""

// TestSaturationPair checks the one engine on a CPU spec at CPU
// saturation (issue #36 §3): gin-cpu-sat, 8 clients on GOMAXPROCS=2 so
// that a request waits for a CPU a large share of its latency, against
// gin-cpu-sat-half, pricing.Compute doing half its rounds for real,
// recorded right after it. Halving the frame's CPU takes its demand off
// the model's CPU station (queueing.CPUDemand), which shortens the CPU
// queue; the timeline simulation keeps the recorded runnable waits, so
// the engine must choose the queueing model and say so. The clients are
// the recorder's (truth), as analyze --clients takes them, and run in the
// service's process, as --clients-in-process says: their time between the
// requests is the CPU's queue, which the model recomputes
// (queueing.Model.ThinkQueueMs).
// The measured mean is the service's own timer around each request (the
// clients' mean, logged, also holds their wait for a CPU after each
// response). The prediction must be within 5 % of it and compare's
// verdict not a miss (while a kept pair misses, satMiss says why and the
// test asserts only that the prediction lies between the measured mean
// and the timeline's).
func TestSaturationPair(t *testing.T) {
	t.Parallel()
	spec, err := whatif.ParseSpec("scale=pricing.Compute:0.5")
	if err != nil {
		t.Fatal(err)
	}
	p := analyzePair(t, "gin-cpu-sat", "gin-cpu-sat-half", spec)
	before := readTruth(t, corpusDir(t)+"/gin-cpu-sat.truth.json")
	if before.Service["cpu_saturated"] != 1 {
		t.Fatalf("gin-cpu-sat's truth does not say it is CPU-saturated")
	}
	g, after := p.g, p.after
	n := float64(g.Count)
	runnable := float64(g.Runnable.Critical) / n / 1e6
	mean := g.Latency.Mean / 1e6
	t.Logf("before: mean %.2f ms (service's timer %.2f), runnable %.2f ms per request (%.0f %% of the mean)", mean, before.Server.MeanMS, runnable, 100*runnable/mean)
	if runnable < 0.25*mean {
		t.Errorf("runnable %.2f ms of a %.2f ms mean: not CPU-saturated", runnable, mean)
	}
	in := whatif.Inputs{Clients: float64(before.Clients), ClientsInProcess: true}
	ev, err := whatif.Evaluate(p.res, g.Name, in, []whatif.Spec{spec})
	if err != nil {
		t.Fatal(err)
	}
	o := ev.Outcomes[0]
	pred := float64(o.Mean) / 1e6
	measured := after.Server.MeanMS
	if ev.Validation != nil {
		t.Logf("model of gin-cpu-sat as recorded: %.2f ms against %.2f measured (%+.1f%%), %.1f rps against %.1f", ev.Validation.ModelMeanMs, ev.Validation.MeasuredMeanMs, ev.Validation.MeanResidual, ev.Validation.ModelRPS, ev.Validation.MeasuredRPS)
	}
	t.Logf("%s: predicted %.2f ms (95 %% %.2f–%.2f, %s: %s; change %s; queue %+.2f ms); after: service's timer %.2f ms, latscope %.2f ms, client %.2f ms: %+.1f%% against the service's timer",
		spec.Text, pred, float64(o.Low)/1e6, float64(o.High)/1e6, o.Method, o.Why, o.Change, float64(o.Queue)/1e6, measured, p.gA.Latency.Mean/1e6, after.Client.MeanMS, 100*(pred/measured-1))
	if o.Method != whatif.Queueing || !strings.HasPrefix(o.Why, "queue at CPU") {
		t.Errorf("%s: %s (%s), want the queueing model on the CPU queue", spec.Text, o.Method, o.Why)
	}
	// The clients run in the service's process (--clients-in-process):
	// their time between requests is the process's goroutines waiting
	// for each other and for a P, the CPU's queue outside the request,
	// which the model recomputes and the reason says (docs/method.md §7,
	// "Clients in the process").
	if !strings.Contains(o.Why, "the clients run in the process: their") || !strings.Contains(o.Why, "think time") {
		t.Errorf("%s: the reason does not say the clients' think time is the CPU's queue: %s", spec.Text, o.Why)
	}
	if !strings.Contains(o.Change, "CPU −") {
		t.Errorf("%s: change %q, want the CPU station's demand cut", spec.Text, o.Change)
	}
	if !o.Interval {
		t.Errorf("%s: no interval", spec.Text)
	}
	// The timeline simulation alone, as the engine answered before a CPU
	// spec reached the model: the recorded runnable waits kept.
	tl := timelineMean(p, before.Clients)
	t.Logf("%s by the timeline simulation alone: %.2f ms with the closed model's cap at %d clients (simulated %.2f ms), %+.1f%% against the service's timer",
		spec.Text, tl, before.Clients, g.Predictions[0].Mean/1e6, 100*(tl/measured-1))
	var qb, qa float64
	for k, u := range o.Before.Resources {
		if u.Kind == queueing.CPU {
			qb, qa = u.WaitMs, o.After.Resources[k].WaitMs
		}
	}
	if qa >= qb {
		t.Errorf("the CPU's modelled queue %.3f → %.3f ms: halving a frame's CPU at saturation must shorten it", qb, qa)
	}
	// compare's verdict, as `latscope compare --clients 8 --what-if SPEC
	// BEFORE AFTER` gives it: the error's 95 % interval against ±5 %
	// (batch means, docs/method.md §13). Near saturation the model's
	// interval is wide (its queues move most with its demands' error).
	rb, err := pipeline.FromResult(p.res, render.Inputs{File: p.rel, CPUSeconds: -1, Clients: float64(before.Clients), ClientsInProcess: true, Specs: []whatif.Spec{spec}})
	if err != nil {
		t.Fatal(err)
	}
	rA, err := pipeline.FromResult(p.resA, render.Inputs{File: p.relA, CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := render.CompareSamples(rb.Report, rA.Report, 100*predictTol, &render.Samples{After: map[string][]int64{p.gA.Name: p.gA.Latencies}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Predictions) != 1 {
		t.Fatalf("compare: %d predictions, want 1", len(c.Predictions))
	}
	pc := c.Predictions[0]
	t.Logf("compare: %s, error %+.1f%% (95 %%: %s to %s)", pc.Verdict, pc.ErrorPct, pctOrNone(pc.ErrorLowPct), pctOrNone(pc.ErrorHighPct))
	if pc.Verdict == render.VerdictMiss {
		t.Errorf("%s: compare's verdict is a miss (the error's 95 %% interval wholly outside ±5 %%)", spec.Text)
	}
	d := pred/measured - 1
	within := d <= predictTol && d >= -predictTol
	switch {
	case within && satMiss != "":
		t.Logf("now within 5%% of the change made for real; the known miss (%s) can go", satMiss)
	case within:
	case satMiss == "":
		t.Errorf("%s predicted %.2f ms; the change made for real measured %.2f ms by the service's timer (%+.1f%%, tolerance 5%%)", spec.Text, pred, measured, 100*d)
	default:
		t.Logf("known miss: %s predicted %.2f ms, measured %.2f ms (%+.1f%%): %s", spec.Text, pred, measured, 100*d, satMiss)
		if pred < measured*(1-predictTol) || pred > tl {
			t.Errorf("%s predicted %.2f ms: want it between the measured %.2f ms and the timeline's %.2f ms", spec.Text, pred, measured, tl)
		}
	}
}

// timelineMean is the timeline simulation's mean for the pair's spec
// with the closed model's cap at the recorder's clients, as the engine's
// timeline outcome takes it (budget.Group.Cap).
func timelineMean(p *keptPair, clients int) float64 {
	tp := p.g.Closed(p.res, budget.Capacity{Clients: float64(clients)})
	return float64(p.g.Cap(p.res, tp, p.g.Predictions[0]).Mean) / 1e6
}
