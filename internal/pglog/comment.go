package pglog

import (
	"github.com/latscope/latscope/tracelog"
	"net/url"
	"strings"
)

// traceParentKey is the sqlcommenter key of the W3C traceparent.
const traceParentKey = "traceparent"

// FindTraceParent returns the first valid traceparent in a /* ... */
// comment anywhere in sql: sqlcommenter's /*traceparent='00-...'*/, also
// among other key='value' pairs, with or without quotes and spaces, and
// with URL-encoded values (%2D for '-'). Comments inside string literals
// are not told apart from real ones.
func FindTraceParent(sql string) (TraceParent, bool) {
	for rest := sql; ; {
		i := strings.Index(rest, "/*")
		if i < 0 {
			return TraceParent{}, false
		}
		body := rest[i+2:]
		end := strings.Index(body, "*/")
		if end < 0 {
			end = len(body) // unterminated: still look
		}
		if tp, ok := traceParentIn(body[:end]); ok {
			return tp, true
		}
		rest = body[min(end+2, len(body)):]
	}
}

// traceParentIn looks for traceparent=<value> in a comment body.
func traceParentIn(body string) (TraceParent, bool) {
	for off := 0; ; {
		i := strings.Index(body[off:], traceParentKey)
		if i < 0 {
			return TraceParent{}, false
		}
		at := off + i
		off = at + len(traceParentKey)
		if at > 0 && !isPairSep(body[at-1]) {
			continue // part of a longer key
		}
		if v, ok := valueAfterKey(body[off:]); ok {
			if tp, err := tracelog.ParseTraceParent(unescape(v)); err == nil {
				return tp, true
			}
		}
	}
}

// isPairSep reports whether c may precede a key.
func isPairSep(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';'
}

// valueAfterKey parses `= 'value'`, `="value"` or `=value` at the start of s
// (spaces allowed around '='); a quoted value ends at its unescaped quote.
func valueAfterKey(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t")
	s, ok := strings.CutPrefix(s, "=")
	if !ok {
		return "", false
	}
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return "", false
	}
	if q := s[0]; q == '\'' || q == '"' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch {
			case s[i] == '\\' && i+1 < len(s):
				i++
				b.WriteByte(s[i])
			case s[i] == q:
				return b.String(), true
			default:
				b.WriteByte(s[i])
			}
		}
		return "", false
	}
	end := strings.IndexAny(s, ", \t\r\n*;")
	if end < 0 {
		end = len(s)
	}
	return s[:end], true
}

// unescape undoes URL encoding, keeping s when it is not valid encoding.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return strings.TrimSpace(u)
	}
	return strings.TrimSpace(s)
}

// Comment returns a sqlcommenter comment carrying tp and the key/value
// pairs kv (tracelog.SQLComment, the format the agent sends).
func Comment(tp TraceParent, kv ...string) string { return tracelog.SQLComment(tp, kv...) }
