package jvm

import (
	"github.com/latscope/latscope/internal/budget"
	"strings"
	"testing"
)

// TestJDBCURL: --db-url and the private cluster's URL become pgjdbc's
// form; what is not a postgres:// URL is refused without its password.
func TestJDBCURL(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "jdbc:postgresql://127.0.0.1:5432/postgres?sslmode=disable&user=postgres", ""},
		{"postgresql://app:s3cret@db.local:6543/shop", "jdbc:postgresql://db.local:6543/shop?password=s3cret&user=app", ""},
		{"postgres://u@127.0.0.1:5432", "jdbc:postgresql://127.0.0.1:5432/postgres?user=u", ""},
		{"mysql://u:pw@127.0.0.1/x", "", "want postgres://"},
		{"host=127.0.0.1 port=5432", "", "want postgres://"},
	} {
		got, err := JDBCURL(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("JDBCURL(%q) error = %v, want %q", tc.in, err, tc.err)
			} else if strings.Contains(err.Error(), "pw@") {
				t.Errorf("JDBCURL(%q) error shows the password: %v", tc.in, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("JDBCURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestPathString: the JVM's lambda proxies (their names change from one
// JVM to the next) and the package leave the call path.
func TestPathString(t *testing.T) {
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"latscopelab.JvmService$$Lambda$67+0x00007f9c01022320.1223685984.handle", "latscopelab.JvmService.handle", "latscopelab.JvmService.queryDb"}, "JvmService.handle › JvmService.queryDb"},
		{[]string{"latscopelab.JvmService.lambda$handle$0", "latscopelab.JvmService.callUpstream"}, "JvmService.lambda$handle$0 › JvmService.callUpstream"},
	} {
		if got := pathString(budgetTerm(tc.path)); got != tc.want {
			t.Errorf("pathString(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func budgetTerm(path []string) budget.Term {
	return budget.Term{Frame: path[len(path)-1], Path: path}
}
