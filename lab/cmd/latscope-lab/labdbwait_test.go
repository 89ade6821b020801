package main

import (
	"strings"
	"testing"
)

// TestLabDBWaitServeFlags: the service refuses bad flags before it
// connects anywhere. (The service itself runs in lab/dbwait's TestLab.)
func TestLabDBWaitServeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "dbwait-serve: --db-url is required"},
		{[]string{"--db-url", "x", "--interval", "0s"}, "--interval 0s: want a positive duration"},
		{[]string{"--db-url", "x", "--cpu-fanout", "0"}, "--cpu-fanout 0: want at least 1 goroutine"},
		{[]string{"--db-url", "x", "extra"}, `unexpected argument "extra"`},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
	} {
		_, _, err := runCLI(t, append([]string{"dbwait-serve"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lab dbwait-serve %q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
	stdout, _, err := runCLI(t, "dbwait-serve", "-h")
	if err != nil || !strings.Contains(stdout, "usage: latscope-lab dbwait-serve --db-url URL") {
		t.Errorf("-h: %v\n%s", err, stdout)
	}
}
