package queueing

import (
	"math"
	"testing"
)

// TestHoldStretchesWithTheCPU: a lock held across CPU work waits for a CPU
// too, so its hold grows with the CPU's queue: unchanged in the model as
// recorded, longer with more clients, and not at all without CPU inside.
func TestHoldStretchesWithTheCPU(t *testing.T) {
	m := &Model{Clients: 4, ThinkMs: 2, Resources: []Resource{
		{Name: "CPU", Kind: CPU, Servers: 2, DemandMs: 2},
		{Name: "lock", Kind: Pool, Servers: 1, DemandMs: 1.5, HoldCPUMs: 1.2},
		{Name: "delays", Kind: Delays, DemandMs: 10},
	}}
	base, err := m.solve() // no stretch known yet: as measured
	if err != nil {
		t.Fatal(err)
	}
	m.cpuStretch = stretch(base)
	again, err := m.solve()
	if err != nil {
		t.Fatal(err)
	}
	if again.Resources[1].DemandMs != 1.5 || again.MeanMs != base.MeanMs {
		t.Errorf("as recorded: hold %.4f ms, mean %.4f (want 1.5 and %.4f)", again.Resources[1].DemandMs, again.MeanMs, base.MeanMs)
	}
	busy := m.clone()
	busy.Clients = 32
	st, err := busy.solve()
	if err != nil {
		t.Fatal(err)
	}
	if s := stretch(st); s <= m.cpuStretch || st.Resources[1].DemandMs <= 1.5 || math.Abs(st.Resources[1].DemandMs-(1.5+1.2*(s-m.cpuStretch))) > 2e-3 { // the state is rounded to µs
		t.Errorf("32 clients: CPU stretch %.3f (recorded %.3f), hold %.4f ms: want longer by the hold's CPU times the stretch's growth", s, m.cpuStretch, st.Resources[1].DemandMs)
	}
	flat := busy.clone()
	flat.Resources[1].HoldCPUMs = 0
	if st, _ := flat.solve(); st.Resources[1].DemandMs != 1.5 {
		t.Errorf("no CPU inside: hold %.4f ms, want 1.5", st.Resources[1].DemandMs)
	}
}
