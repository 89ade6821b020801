package httpurl

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		in, err string
	}{
		{"http://127.0.0.1:8080/", ""},
		{"https://example.test/path?q=1", ""},
		{"ftp://127.0.0.1/", "scheme must be http:// or https://"},
		{"127.0.0.1:8080", "colon"},
		{"localhost/x", "scheme"},
		{"http:///nohost", "no host"},
		{"http://127.0.0.1:0/", "port 0"},
		{"http://127.0.0.1:70000/", "port 70000"},
		{"http://[::1", "missing ']'"},
	} {
		err := Check(tt.in)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Check(%q) = %v, want %q", tt.in, err, tt.err)
		}
	}
}
