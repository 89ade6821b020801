// Package termsafe makes strings that come from traffic (task and route
// names, trace.Log values, Prometheus labels, log lines) safe to print on a
// terminal: control characters are escaped, so a name cannot clear the
// screen, set the window title, move the cursor or forge a report line with
// "\n" or "\r".
package termsafe

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every control character (C0, DEL, C1, and the
// Unicode line and paragraph separators) and every invalid UTF-8 byte
// written as a Go escape (\n, \x1b, \u2028). Printable text, including
// non-ASCII letters, is unchanged; a string with nothing to escape is
// returned as it is, without allocating.
func String(s string) string {
	if Safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case needsEscape(r):
			q := strconv.QuoteRune(r) // 'x' with the escape inside
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Safe reports whether s prints as it is: valid UTF-8 without control
// characters.
func Safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return safeSlow(s[i:])
		}
	}
	return true
}

func safeSlow(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || needsEscape(r) {
			return false
		}
		i += n
	}
	return true
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// Fprintf is fmt.Fprintf with every string argument (of any string type)
// and every error argument escaped by String: the format, written by the
// program, keeps its own newlines and tabs; the data cannot add any.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return fmt.Fprintf(w, format, Args(args)...)
}

// Args returns args with each string and error escaped by String, for a
// formatting call of the caller's own (args itself is not changed).
func Args(args []any) []any {
	var out []any
	for i, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case error:
			s = v.Error()
		default:
			rv := reflect.ValueOf(a)
			if !rv.IsValid() || rv.Kind() != reflect.String {
				continue
			}
			if Safe(rv.String()) {
				continue
			}
			if out == nil {
				out = slices.Clone(args)
			}
			nv := reflect.New(rv.Type()).Elem()
			nv.SetString(String(rv.String()))
			out[i] = nv.Interface()
			continue
		}
		if _, isErr := a.(error); !isErr && Safe(s) {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = String(s)
	}
	if out == nil {
		return args
	}
	return out
}
