package tracelog

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// TraceParent is a W3C Trace Context traceparent: a trace ID, the parent
// span ID and the trace flags.
type TraceParent struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// traceParentLen is the length of a version-00 traceparent.
const traceParentLen = 55 // "00-" + 32 + "-" + 16 + "-" + 2

// ParseTraceParent parses "<version>-<32 hex>-<16 hex>-<2 hex>" in
// lower-case hex, per the W3C spec: version ff and all-zero IDs are
// invalid, version 00 has exactly these four fields, and later versions
// may append "-..." fields, which are ignored.
func ParseTraceParent(s string) (TraceParent, error) {
	var tp TraceParent
	if err := parseTraceParent(s, &tp); err != nil {
		return TraceParent{}, fmt.Errorf("traceparent %q: %w", clip(s, traceParentLen+8), err)
	}
	return tp, nil
}

// parseTraceParent is ParseTraceParent without the error context.
func parseTraceParent(s string, tp *TraceParent) error {
	if len(s) < traceParentLen {
		return errors.New("too short")
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return errors.New("want version-traceid-spanid-flags")
	}
	var version [1]byte
	if err := decodeHexLower(version[:], s[0:2]); err != nil || version[0] == 0xff {
		return errors.New("bad version")
	}
	if len(s) > traceParentLen && (version[0] == 0 || s[traceParentLen] != '-') {
		return errors.New("trailing characters")
	}
	if err := decodeHexLower(tp.TraceID[:], s[3:35]); err != nil || tp.TraceID == [16]byte{} {
		return errors.New("bad trace-id")
	}
	if err := decodeHexLower(tp.SpanID[:], s[36:52]); err != nil || tp.SpanID == [8]byte{} {
		return errors.New("bad parent-id")
	}
	var flags [1]byte
	if err := decodeHexLower(flags[:], s[53:55]); err != nil {
		return errors.New("bad trace-flags")
	}
	tp.Flags = flags[0]
	return nil
}

// decodeHexLower decodes lower-case hex only, as the spec requires.
func decodeHexLower(dst []byte, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'F' {
			return errors.New("upper-case hex")
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err
}

// String formats tp as a version-00 traceparent.
func (tp TraceParent) String() string {
	return fmt.Sprintf("00-%x-%x-%02x", tp.TraceID[:], tp.SpanID[:], tp.Flags)
}

// IsValid reports whether both IDs are non-zero (the zero TraceParent
// means "none").
func (tp TraceParent) IsValid() bool {
	return tp.TraceID != [16]byte{} && tp.SpanID != [8]byte{}
}

// Sampled reports the sampled trace flag.
func (tp TraceParent) Sampled() bool { return tp.Flags&1 != 0 }

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
