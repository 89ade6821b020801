package pglog

import (
	"maps"
	"net/url"
	"slices"
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
			if tp, err := ParseTraceParent(unescape(v)); err == nil {
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

// Comment returns a sqlcommenter comment carrying tp (when valid) and the
// key/value pairs kv (k1, v1, k2, v2, ...; an unpaired last key is
// ignored): /*k1='v1',traceparent='00-...-01'*/. Per the sqlcommenter
// spec, keys and values are URL-encoded, a ' left in them is escaped as
// \', and pairs are sorted by key; a later duplicate key wins, and tp wins
// over a "traceparent" in kv. With nothing to say it returns "". Prepend
// it with a space: Comment(tp) + " " + sql.
func Comment(tp TraceParent, kv ...string) string {
	pairs := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		pairs[kv[i]] = kv[i+1]
	}
	if tp.IsValid() {
		pairs[traceParentKey] = tp.String()
	}
	if len(pairs) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(pairs))
	var b strings.Builder
	b.WriteString("/*")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(metaEscape(urlEncode(k)))
		b.WriteString("='")
		b.WriteString(metaEscape(urlEncode(pairs[k])))
		b.WriteByte('\'')
	}
	b.WriteString("*/")
	return b.String()
}

// urlEncode percent-encodes all but unreserved characters and '/', as
// Python's urllib.parse.quote does in sqlcommenter's reference code.
// '*' is encoded, so a value can never close the comment.
func urlEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// isUnreserved reports RFC 3986 unreserved characters.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// metaEscape escapes ' as \' (sqlcommenter's meta-character rule; after
// urlEncode there is none left, but the rule is the spec's).
func metaEscape(s string) string { return strings.ReplaceAll(s, "'", `\'`) }
