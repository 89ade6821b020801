// Package e2e holds the agent's tests that need more than the agent's own
// module: a real PostgreSQL (the main module's internal/pgcluster/pgtest),
// latscope's analysis of a snapshot the agent wrote (internal/fixture,
// internal/budget), its load generator (internal/loadgen, the overhead
// measurement of docs/agent.md) and Prometheus (agentprom). It is a module
// of its own, so that the agent's module requires none of them; its tests
// are the agent's as a user's service sees it: only its exported API.
package e2e
