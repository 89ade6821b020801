package queueing

import "github.com/latscope/latscope/internal/budget"

// Solve solves m at its client count, or at its arrival rate when open; an
// open model that cannot keep up returns an *UnstableError.
func (m *Model) Solve() (State, error) { return m.solve() }

// Apply returns a copy of m changed by the what-if spec (the grammar of
// Predict) and a sentence saying how. res is the result m was built from.
func (m *Model) Apply(res *budget.Result, spec string) (*Model, string, error) {
	g, err := pickGroup(res, m.Group)
	if err != nil {
		return nil, "", err
	}
	return m.apply(res, g, spec)
}

// ScaleDemands returns a copy of m with every station's demand multiplied
// by f, the think time kept: the model as it would be measured were every
// demand off by the factor f, for the sensitivity of a prediction to the
// error of the measured demands.
func (m *Model) ScaleDemands(f float64) *Model {
	c := m.clone()
	for i := range c.Resources {
		c.Resources[i].DemandMs *= f
	}
	return c
}

// Queued reports whether t is the acquire wait of one of m's pools: its
// recorded wait is that pool's queue, which the model recomputes from the
// demands rather than takes as a demand (a what-if that scales it changes
// no station: docs/method.md §7).
func (m *Model) Queued(t budget.Term) bool {
	for _, r := range m.Resources {
		if r.Kind == Pool && r.acquire != nil && r.acquire(t) {
			return true
		}
	}
	return false
}
