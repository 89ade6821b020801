package budget

import (
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// TraceID is a W3C trace ID, the one a request's latscope.request log
// carries (tracelog.Request): the ID a tracing UI shows for its spans.
type TraceID [16]byte

// String returns the ID's 32 lower-case hex digits.
func (id TraceID) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether id is all zeros (no trace ID: invalid in W3C).
func (id TraceID) IsZero() bool { return id == TraceID{} }

// ParseTraceID parses a trace ID as a tracing UI shows it: 32 hex digits
// (either case), not all zero. Its error is one line naming the bad ID.
func ParseTraceID(s string) (TraceID, error) {
	var id TraceID
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	if len(s) != 32 {
		return id, fmt.Errorf("trace ID %q: want 32 hex digits, got %d characters", shown, len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return TraceID{}, fmt.Errorf("trace ID %q: not hex (32 digits 0-9, a-f)", shown)
	}
	if id.IsZero() {
		return id, fmt.Errorf("trace ID %q: all zeros is not a trace ID", shown)
	}
	return id, nil
}

// SlowTraces is how many of a group's slowest requests with a trace ID
// Group.SlowTraces lists.
const SlowTraces = 5

// TracedRequest is one request with its trace ID (Group.SlowTraces).
type TracedRequest struct {
	TraceID TraceID
	Task    tracein.TaskID
	Latency int64 // ns
}

// requestLog notes a latscope.request log in r's own task: the first one
// gives the request its trace ID.
func (a *Analyzer) requestLog(r *reqState, msg string) {
	if r.traced {
		return
	}
	tp, err := tracelog.ParseTraceParent(msg)
	if err != nil {
		a.info.BadRequestLogs++
		return
	}
	r.traceID, r.traced = tp.TraceID, true
}

// keep reports whether a finished request passes Options.TraceID.
func (a *Analyzer) keep(r *reqState) bool {
	if a.opts.TraceID == "" {
		return true
	}
	return a.traceOK && r.traced && r.traceID == a.traceWant
}

// keepSlow keeps the SlowTraces slowest requests of gs that have a trace
// ID, slowest first (ties: the earlier task first).
func (gs *groupState) keepSlow(r *reqState, lat int64) {
	if !r.traced {
		return
	}
	gs.traced++
	s := gs.slowTraces
	if len(s) == SlowTraces && lat <= s[len(s)-1].Latency {
		return
	}
	s = append(s, TracedRequest{TraceID: r.traceID, Task: r.task, Latency: lat})
	sort.SliceStable(s, func(i, j int) bool { return s[i].Latency > s[j].Latency })
	if len(s) > SlowTraces {
		s = s[:SlowTraces]
	}
	gs.slowTraces = s
}
