package queues

import (
	"strings"
	"testing"
)

func TestParseServeFlags(t *testing.T) {
	ok := []string{"--cores", "2", "--cpu", "500us", "--db", "10ms", "--upstream", "30ms", "--pool", "4", "--rounds", "100"}
	cfg, err := parseServeFlags(ok)
	if err != nil {
		t.Fatal(err)
	}
	again, err := parseServeFlags(cfg.args()[1:])
	if err != nil || again != cfg {
		t.Errorf("args() = %q parse back to %+v, %v; want %+v", cfg.args(), again, err, cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rounds", "1"}, "--cores 0: want 1 to 1024"},
		{[]string{"--cores", "1"}, "--rounds 0: want a positive number"},
		{[]string{"--cores", "1", "--rounds", "1", "--pool", "0"}, "--pool 0: want at least 1 connection"},
		{[]string{"--cores", "1", "--rounds", "1", "--db", "-1ms"}, "want durations >= 0"},
		{[]string{"--cores", "1", "--rounds", "1", "extra"}, `unexpected argument "extra"`},
		{[]string{"--cores", "x"}, `invalid value "x" for flag -cores`},
	} {
		_, err := parseServeFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
