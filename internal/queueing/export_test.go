package queueing_test

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/queueing"
)

// TestExported: Solve, Apply and ScaleDemands give what Predict gives, and
// scaling every demand by 1 changes nothing.
func TestExported(t *testing.T) {
	res := record(t, "pool")
	in := queueing.Inputs{Clients: 6, Pools: []queueing.PoolSpec{{Name: "withConn", Size: 2}}}
	p, err := queueing.Predict(res, in, []string{"clients=12"})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Model
	before, err := m.ScaleDemands(1).Solve()
	if err != nil {
		t.Fatal(err)
	}
	after, change, err := m.Apply(res, "clients=12")
	if err != nil {
		t.Fatal(err)
	}
	st, err := after.Solve()
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Outcomes[0]; before.MeanMs != o.Before.MeanMs || st.MeanMs != o.After.MeanMs || change != o.Change {
		t.Errorf("exported: %.3f → %.3f ms (%s), Predict: %.3f → %.3f ms (%s)", before.MeanMs, st.MeanMs, change, o.Before.MeanMs, o.After.MeanMs, o.Change)
	}
	if up, err := m.ScaleDemands(1.5).Solve(); err != nil || up.MeanMs <= before.MeanMs {
		t.Errorf("demands ×1.5: %.3f ms (%v), want above %.3f ms", up.MeanMs, err, before.MeanMs)
	}
}

// TestQueued: the pool's acquire wait is its queue (recomputed by the
// model, never a demand); its hold and every other term are not.
func TestQueued(t *testing.T) {
	res := record(t, "pool")
	p, err := queueing.Predict(res, queueing.Inputs{Clients: 6, Pools: []queueing.PoolSpec{{Name: "withConn", Size: 2}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for _, term := range res.Terms {
		if !p.Model.Queued(term) {
			continue
		}
		queued++
		if !strings.Contains(term.Frame, "withConn") {
			t.Errorf("%s %s taken for the pool's queue", term.Frame, term.Mechanism)
		}
	}
	if queued == 0 {
		t.Error("no term taken for the pool's acquire wait")
	}
	noPool, err := queueing.Predict(res, queueing.Inputs{Clients: 6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range res.Terms {
		if noPool.Model.Queued(term) {
			t.Errorf("without a pool: %s %s taken for a pool's queue", term.Frame, term.Mechanism)
		}
	}
}
