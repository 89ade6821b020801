package corpus

import (
	"fmt"
	"testing"

	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/whatif"
)

// TestPoolPairs checks the one engine's pool path against the change made
// for real (issue #36 §3: a pool queue that an overlap changes was
// modelled only by predict): sql-pool-serial, a 20 ms upstream call then
// a 4 ms query through database/sql with SetMaxOpenConns(2) under 6
// clients, against the same service with the two overlapped
// (sql-pool-overlap) and with 4 connections (sql-pool-4). The pool is
// given as analyze/compare/predict take it (--pool loadStock:2: the frame
// that acquires it). It logs the engine's method and, beside it, what the
// timeline simulation alone says (no pool given). A pair whose
// prediction holds is asserted within the 5 % bar; a known miss (miss
// says why, with numbers) is kept and asserted only in what the model
// guarantees (a larger pool never lengthens its queue, and the mean it
// predicts moves by no more than the queue it modelled before) and in
// compare's verdict, which must not be a miss (the error's 95 % interval
// wholly outside ±5 %), as the JVM pairs are judged.
func TestPoolPairs(t *testing.T) {
	t.Parallel()
	pool := []queueing.PoolSpec{{Name: "loadStock", Size: 2}}
	for _, pair := range []struct {
		before, after, spec string
		miss                string
	}{
		{"sql-pool-serial", "sql-pool-overlap", "overlap=fetchRate,loadStock", ""},
		// Recorded 2026-12-05: predicted 24.34 ms, measured 25.85 (-5.8 %;
		// compare: inconclusive, -7.5 to -4.1 %).
		// The 4 ms holds are near-constant, so 6 clients kept 2
		// connections busy with almost no queue (0.03 ms per request by
		// the service's timer, 0.015 in the trace); the model, exponential,
		// puts 0.67 ms there and removes it. The rest is the host: the
		// after recording's sleeps overran 0.8 ms more (hold 4.78 against
		// 4.39 ms, upstream 20.99 against 20.58). docs/method.md §7,
		// "Near-constant holds"; docs/accuracy.md.
		{"sql-pool-serial", "sql-pool-4", "pool=loadStock:4", "near-constant holds queue less than the model's exponential ones, and the host overran the after recording's sleeps"},
	} {
		t.Run(pair.after, func(t *testing.T) {
			t.Parallel()
			spec, err := whatif.ParseSpec(pair.spec)
			if err != nil {
				t.Fatal(err)
			}
			p := analyzePair(t, pair.before, pair.after, spec)
			res, resA, g, after, rel, relA := p.res, p.resA, p.g, p.after, p.rel, p.relA
			ev, err := whatif.Evaluate(res, g.Name, whatif.Inputs{Pools: pool}, []whatif.Spec{spec})
			if err != nil {
				t.Fatal(err)
			}
			o := ev.Outcomes[0]
			pred := float64(o.Mean) / 1e6
			measured := p.gA.Latency.Mean / 1e6
			before := g.Latency.Mean / 1e6
			if ev.Validation != nil {
				t.Logf("model of %s as recorded: %.2f ms against %.2f measured (%+.1f%%)", pair.before, ev.Validation.ModelMeanMs, ev.Validation.MeasuredMeanMs, ev.Validation.MeanResidual)
			}
			if o.Before != nil && o.After != nil {
				for k, u := range o.Before.Resources {
					t.Logf("  %s before %+v after %+v", u.Name, u, o.After.Resources[k])
				}
			}
			t.Logf("%s: before %.2f ms, predicted %.2f ms (%.2f–%.2f, %s: %s; queue %+.2f ms, change %s); after %.2f ms (latscope), %.2f ms (service's timer): %+.1f%%, %+.1f%%",
				pair.spec, before, pred, float64(o.Low)/1e6, float64(o.High)/1e6, o.Method, o.Why, float64(o.Queue)/1e6, o.Change, measured, after.Server.MeanMS, 100*(pred/measured-1), 100*(pred/after.Server.MeanMS-1))
			// The timeline simulation alone: no pool given, so no queue
			// modelled (a model spec has no timeline answer).
			if !spec.Model() {
				tl, err := whatif.Evaluate(res, g.Name, whatif.Inputs{}, []whatif.Spec{spec})
				if err != nil {
					t.Fatal(err)
				}
				to := tl.Outcomes[0]
				tp := float64(to.Mean) / 1e6
				t.Logf("%s by the %s alone: %.2f ms (%s): %+.1f%% against latscope's, %+.1f%% against the service's timer",
					pair.spec, to.Method, tp, to.Why, 100*(tp/measured-1), 100*(tp/after.Server.MeanMS-1))
			}
			// compare's verdict, as `latscope compare --pool loadStock:2
			// --what-if SPEC BEFORE AFTER` gives it: the error's 95 %
			// interval against ±5 % (batch means, docs/method.md §13).
			rb, err := pipeline.FromResult(res, render.Inputs{File: rel, CPUSeconds: -1, Pools: pool, Specs: []whatif.Spec{spec}})
			if err != nil {
				t.Fatal(err)
			}
			rA, err := pipeline.FromResult(resA, render.Inputs{File: relA, CPUSeconds: -1})
			if err != nil {
				t.Fatal(err)
			}
			samples := &render.Samples{After: map[string][]int64{}}
			for _, ga := range resA.Groups {
				samples.After[ga.Name] = ga.Latencies
			}
			c, err := render.CompareSamples(rb.Report, rA.Report, 100*predictTol, samples)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Predictions) != 1 {
				t.Fatalf("compare: %d predictions, want 1", len(c.Predictions))
			}
			pc := c.Predictions[0]
			t.Logf("compare: %s, error %+.1f%% (95 %%: %s to %s)", pc.Verdict, pc.ErrorPct, pctOrNone(pc.ErrorLowPct), pctOrNone(pc.ErrorHighPct))
			if pc.Verdict == render.VerdictMiss {
				t.Errorf("%s: compare's verdict is a miss (the error's 95 %% interval wholly outside ±5 %%)", pair.spec)
			}
			if o.Method != whatif.Queueing {
				t.Errorf("%s: %s, want the queueing model (a pool is given and in play)", pair.spec, o.Method)
			}
			within := true
			for _, m := range []float64{measured, after.Server.MeanMS} {
				if d := pred/m - 1; d > predictTol || d < -predictTol {
					within = false
					if pair.miss == "" {
						t.Errorf("%s predicted %.2f ms; the change made for real measured %.2f ms (%+.1f%%, tolerance 5%%)", pair.spec, pred, m, 100*d)
					}
				}
			}
			if pair.miss == "" {
				return
			}
			if within {
				t.Logf("%s: now within 5%% of the change made for real; the known miss (%s) can go", pair.spec, pair.miss)
			} else {
				t.Logf("known miss: %s predicted %.2f ms, measured %.2f ms (%+.1f%%): %s", pair.spec, pred, measured, 100*(pred/measured-1), pair.miss)
			}
			// What the model guarantees for a larger pool: its queue does
			// not grow, and the mean moves by no more than the queue the
			// model put there before.
			if o.Before == nil || o.After == nil {
				t.Fatalf("%s: no model states", pair.spec)
			}
			var qb, qa float64
			for k, u := range o.Before.Resources {
				if u.Name == "loadStock" {
					qb, qa = u.WaitMs, o.After.Resources[k].WaitMs
				}
			}
			if qa > qb {
				t.Errorf("%s: the pool's modelled queue grew, %.3f → %.3f ms", pair.spec, qb, qa)
			}
			if pred > before || before-pred > qb+0.01 {
				t.Errorf("%s predicted %.2f ms from %.2f: want a fall of at most the modelled queue, %.3f ms", pair.spec, pred, before, qb)
			}
		})
	}
}

// pctOrNone formats an optional percentage.
func pctOrNone(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}
