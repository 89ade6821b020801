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
