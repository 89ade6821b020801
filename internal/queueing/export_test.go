package queueing_test

import (
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
