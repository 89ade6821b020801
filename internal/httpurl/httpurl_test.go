package httpurl

import (
	"errors"
	"fmt"
	"io/fs"
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

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:9090/", "http://127.0.0.1:9090/"},
		{"http://user:pw@prom:9090/", "http://user:xxxxx@prom:9090/"},
		{"https://user:p%40ss@prom/x?q=1", "https://user:xxxxx@prom/x?q=1"},
		{"http://user@prom/", "http://user@prom/"},
		{"postgres://app:s3cret@127.0.0.1:5432/db?sslmode=disable", "postgres://app:xxxxx@127.0.0.1:5432/db?sslmode=disable"},
		{"postgresql://app:s3cret@h1:5432,h2:5433/db", "postgresql://app:xxxxx@h1:5432,h2:5433/db"},
		{"http://u:p@ss@host/", "http://u:xxxxx@host/"},
		{"http://u@x:p@host/", "http://u%40x:xxxxx@host/"},
		{"//u@x:p@host/ in text", "//u@x:xxxxx@host/ in text"},
		{`Post "http://u:s3cret@127.0.0.1:1/api": dial tcp: refused`, `Post "http://u:xxxxx@127.0.0.1:1/api": dial tcp: refused`},
		{"http://[::1", "http://[::1"},
		{"bad url //ops:hunter2@ in text, and http://a:b@c:8080 too", "bad url //ops:xxxxx@ in text, and http://a:xxxxx@c:8080 too"},
		{"http://host:8080/path@x", "http://host:8080/path@x"},
		{"http://h/?next=http://a:b@c/", "http://h/?next=http://a:xxxxx@c/"},
		{"", ""},
	} {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactError(t *testing.T) {
	if RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
	plain := errors.New("no URL here")
	if RedactError(plain) != plain {
		t.Error("an error without a password was wrapped")
	}
	err := RedactError(fmt.Errorf("GET http://ops:hunter2@h/x: %w", fs.ErrNotExist))
	if err.Error() != "GET http://ops:xxxxx@h/x: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RedactError = %q, errors.Is %v", err, errors.Is(err, fs.ErrNotExist))
	}
}
