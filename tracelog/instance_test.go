package tracelog

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInstance(t *testing.T) {
	long := strings.Repeat("é", MaxInstanceLen) // 2 bytes each
	tests := []struct {
		in, clean string
		parses    bool
	}{
		{"web-1", "web-1", true},
		{"  web-1\n", "web-1", false},
		{"a\tb", "a?b", false},
		{"", "", false},
		{long, long[:MaxInstanceLen], false},
		{long[:MaxInstanceLen], long[:MaxInstanceLen], true},
	}
	for _, tt := range tests {
		if got := CleanInstance(tt.in); got != tt.clean {
			t.Errorf("CleanInstance(%q) = %q, want %q", tt.in, got, tt.clean)
		}
		got, err := ParseInstance(tt.in)
		if (err == nil) != tt.parses || (err == nil && got != tt.in) {
			t.Errorf("ParseInstance(%q) = %q, %v; want parses=%v", tt.in, got, err, tt.parses)
		}
	}
	if h, err := os.Hostname(); err == nil && DefaultInstance() != CleanInstance(h) {
		t.Errorf("DefaultInstance() = %q, want the host name %q", DefaultInstance(), h)
	}
}

// FuzzInstance: a cleaned name is clean (cleaning again keeps it), fits
// MaxInstanceLen, is valid UTF-8 when the input was, and parses unless
// empty; whatever parses is already clean.
func FuzzInstance(f *testing.F) {
	for _, s := range []string{"web-1", " a\tb ", "", strings.Repeat("é", 200), "x\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CleanInstance(s)
		if CleanInstance(c) != c || len(c) > MaxInstanceLen || (utf8.ValidString(s) && !utf8.ValidString(c)) {
			t.Fatalf("CleanInstance(%q) = %q: not clean, too long or cut inside a character", s, c)
		}
		if got, err := ParseInstance(c); (err == nil) != (c != "") || (err == nil && got != c) {
			t.Fatalf("ParseInstance(%q) = %q, %v", c, got, err)
		}
		if got, err := ParseInstance(s); err == nil && got != c {
			t.Fatalf("ParseInstance(%q) accepted a name that is not clean (%q)", s, c)
		}
	})
}
