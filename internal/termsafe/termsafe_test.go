package termsafe

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"GET /users/{id}", "GET /users/{id}"},
		{"café ☕", "café ☕"},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"a\r\nrequest: 1 requests", `a\r\nrequest: 1 requests`},
		{"tab\there", `tab\there`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"", ""},
	} {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStringAllocs(t *testing.T) {
	s := "demo.callUpstream http.(*persistConn).roundTrip"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String of a safe string allocates %v times", n)
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[2Jhello\r\n")
	f.Add("café\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q: not valid UTF-8", s, out)
		}
		for _, r := range out {
			if needsEscape(r) {
				t.Fatalf("String(%q) = %q: control character %U left", s, out, r)
			}
		}
		if Safe(s) != (out == s) {
			t.Fatalf("Safe(%q) = %v but String changed it to %q", s, Safe(s), out)
		}
		if Safe(s) && strings.Contains(out, `\`) && !strings.Contains(s, `\`) {
			t.Fatalf("safe %q escaped", s)
		}
	})
}

type kind string

func TestFprintf(t *testing.T) {
	var b strings.Builder
	_, err := Fprintf(&b, "%s\t%d\t%v\t%s|%s\n", "a\nb", 7, kind("k\x1b"), errors.New("e\r"), kind("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\\nb\t7\tk\\x1b\te\\r|ok\n"; b.String() != want {
		t.Errorf("Fprintf = %q, want %q", b.String(), want)
	}
}
