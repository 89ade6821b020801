package dbwait

import "errors"

// Errors Finalize wraps, with the counts and a hint.
var (
	// ErrNoSpans: the trace has no DB span with a traceparent.
	ErrNoSpans = errors.New("no DB spans in the trace")
	// ErrNoMatch: no span's traceparent is in the statement log.
	ErrNoMatch = errors.New("no statement matched")
	// ErrClockMismatch: most matched statements lie outside their spans.
	ErrClockMismatch = errors.New("clock mismatch")
)
