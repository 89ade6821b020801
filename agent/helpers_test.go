package agent

import "github.com/latscope/latscope/agent/internal/agenttest"

// What the agent's tests share with those of its driver, router and
// metrics packages.
var (
	traceEvents = agenttest.Events
	traced      = agenttest.Traced
	logs        = agenttest.Logs
	inRegion    = agenttest.InRegion
	parseAll    = agenttest.ParseAll
	jobSpan     = agenttest.JobSpan
	jobContext  = agenttest.JobContext
	burn        = agenttest.Burn
	get         = agenttest.Get
	// traceFileEvents reads traceEvents from a file.
	traceFileEvents = agenttest.FileEvents
)
