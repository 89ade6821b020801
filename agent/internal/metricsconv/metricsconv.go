// Package metricsconv lets a metrics package of the agent's (agentprom)
// accept its own kind of value as agent.Options.Metrics — a
// prometheus.Registerer — without package agent importing it: the package
// registers a conversion when it is linked, as database/sql drivers do.
package metricsconv

import "sync"

var (
	mu    sync.Mutex
	convs []func(any) (any, bool)
)

// Register adds f, which turns a value it knows into an agent.Metrics
// (true), or reports that it does not know it (false).
func Register(f func(any) (any, bool)) {
	mu.Lock()
	defer mu.Unlock()
	convs = append(convs, f)
}

// Convert returns what the first registered conversion that knows v makes
// of it; false when none does.
func Convert(v any) (any, bool) {
	mu.Lock()
	fs := convs
	mu.Unlock()
	for _, f := range fs {
		if m, ok := f(v); ok {
			return m, true
		}
	}
	return nil, false
}
