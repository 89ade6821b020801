package pglog

import (
	"fmt"

	"github.com/latscope/latscope/tracelog"
)

// TraceParent is a W3C Trace Context traceparent (tracelog.TraceParent, the
// type the agent writes and every analyser reads).
type TraceParent = tracelog.TraceParent

// ParseTraceParent parses a traceparent (tracelog.ParseTraceParent).
func ParseTraceParent(s string) (TraceParent, error) {
	tp, err := tracelog.ParseTraceParent(s)
	if err != nil {
		return TraceParent{}, fmt.Errorf("pglog: %w", err)
	}
	return tp, nil
}
