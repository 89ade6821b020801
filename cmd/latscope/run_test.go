package main

import (
	"strings"
	"testing"
)

// TestMovedCommands: `latscope lab …` and `latscope proxy …`, which the
// product binary no longer holds, exit 2 with one line giving the command
// to run instead, with the arguments given; their -h says the same.
func TestMovedCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "--loaded", "dbwait"}, "latscope: lab: not in this binary: run `go run ./lab/cmd/latscope-lab --loaded dbwait` from a clone of the repository"},
		{[]string{"lab"}, "latscope: lab: not in this binary: run `go run ./lab/cmd/latscope-lab` from a clone"},
		{[]string{"proxy", "--to", "127.0.0.1:5432"}, "latscope: proxy: not in this binary: run `go run ./lab/cmd/latscope-lab proxy --to 127.0.0.1:5432` from a clone"},
	} {
		code, stderr := runExit(t, tc.args...)
		if code != 2 || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line starting %q", tc.args, code, stderr, tc.want)
		}
	}
	stdout, _, err := runCLI(t, "proxy", "-h")
	if err != nil || !strings.Contains(stdout, "go run ./lab/cmd/latscope-lab proxy -h") {
		t.Errorf("proxy -h: %v\n%s", err, stdout)
	}
}
