package tracelog

import (
	"maps"
	"slices"
	"strings"
)

// traceParentKey is the sqlcommenter key of the W3C traceparent.
const traceParentKey = "traceparent"

// SQLComment returns a sqlcommenter comment carrying tp (when valid) and the
// key/value pairs kv (k1, v1, k2, v2, ...; an unpaired last key is
// ignored): /*k1='v1',traceparent='00-...-01'*/. Per the sqlcommenter
// spec, keys and values are URL-encoded, a ' left in them is escaped as
// \', and pairs are sorted by key; a later duplicate key wins, and tp wins
// over a "traceparent" in kv. With nothing to say it returns "". Prepend
// it with a space: SQLComment(tp) + " " + sql.
func SQLComment(tp TraceParent, kv ...string) string {
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
