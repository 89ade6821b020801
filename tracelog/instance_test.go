package tracelog

import (
	"os"
	"strings"
	"testing"
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
