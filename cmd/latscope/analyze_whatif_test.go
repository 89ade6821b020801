package main

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/queueing"
)

// TestWhatIfAlias: --predict is --what-if in analyze and compare: the same
// output, the two spellings mixed in one command line keep their order.
func TestWhatIfAlias(t *testing.T) {
	t.Parallel()
	serial, wg := fixtureTrace(t, "serial"), fixtureTrace(t, "waitgroup")
	for _, tc := range []struct{ alias, canon []string }{
		{[]string{"analyze", "--predict", "overlap=callUpstream,queryDB", "--predict", "remove=lockedSection", serial},
			[]string{"analyze", "--what-if", "overlap=callUpstream,queryDB", "--what-if", "remove=lockedSection", serial}},
		{[]string{"analyze", "--json", "--predict", "overlap=callUpstream,queryDB", "--what-if", "scale=queryDB:0.5", serial},
			[]string{"analyze", "--json", "--what-if", "overlap=callUpstream,queryDB", "--what-if", "scale=queryDB:0.5", serial}},
		{[]string{"compare", "--what-if", "overlap=callUpstream,queryDB", "--predict", "remove=lockedSection", serial, wg},
			[]string{"compare", "--what-if", "overlap=callUpstream,queryDB", "--what-if", "remove=lockedSection", serial, wg}},
	} {
		a, _, err := runCLI(t, tc.alias...)
		if err != nil {
			t.Fatalf("%v: %v", tc.alias, err)
		}
		c, _, err := runCLI(t, tc.canon...)
		if err != nil {
			t.Fatalf("%v: %v", tc.canon, err)
		}
		if a != c {
			t.Errorf("%v and %v print different reports", tc.alias, tc.canon)
		}
	}
	for _, cmd := range []string{"analyze", "compare"} {
		out, _, err := runCLI(t, cmd, "-h")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "(repeatable; alias --predict)") {
			t.Errorf("%s -h does not say --what-if's alias:\n%s", cmd, out)
		}
	}
}

// TestWhatIfGrammar: one grammar in analyze, compare and predict. A spec
// that is not one is refused by each with the same text, as a usage error
// (exit 2) naming the flag; a timeline what-if runs in all three.
func TestWhatIfGrammar(t *testing.T) {
	t.Parallel()
	serial := fixtureTrace(t, "serial")
	commands := map[string]func(flag, spec string) []string{
		"analyze": func(f, s string) []string { return []string{"analyze", f, s, serial} },
		"compare": func(f, s string) []string { return []string{"compare", f, s, serial, serial} },
		"predict": func(f, s string) []string { return []string{"predict", "--clients", "4", f, s, serial} },
	}
	for _, tc := range []struct{ spec, want string }{
		{"shrink=x", `unknown operation "shrink"`},
		{"remove", "want remove=TERM, scale=TERM:FACTOR or overlap=TERM,TERM"},
		{"scale=queryDB:NaN", "FACTOR a number from 0 to 1000"},
		{"overlap=callUpstream", "overlap=TERM,TERM (two terms)"},
		{"pool=x:0", "NAME:SIZE or SIZE with SIZE from 1 to 1000000"},
		{"cores=", "want cores=N"},
	} {
		for name, args := range commands {
			_, _, err := runCLI(t, args("--what-if", tc.spec)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "flag -what-if") {
				t.Errorf("%s --what-if %s: %v, want an error naming -what-if with %q", name, tc.spec, err, tc.want)
			}
			if got := exitStatus(err); got != 2 {
				t.Errorf("%s --what-if %s: exit %d, want 2", name, tc.spec, got)
			}
		}
	}
	for name, args := range commands {
		if _, _, err := runCLI(t, args("--what-if", "remove=lockedSection")...); err != nil {
			t.Errorf("%s --what-if remove=lockedSection: %v", name, err)
		}
	}
	for _, spec := range []string{"pool=3", "cores=1", "clients=40"} {
		if _, _, err := runCLI(t, "predict", "--clients", "4", "--what-if", spec, serial); err != nil && strings.Contains(err.Error(), "flag -what-if") {
			t.Errorf("predict --what-if %s: refused by the grammar: %v", spec, err)
		}
	}
}

// TestWhatIfRefusals: analyze and compare evaluate the timeline what-ifs;
// the queueing model's (pool=, cores=, clients=, rate=) are refused in one
// line that names the flag as given and latscope predict, never ignored.
// analyze's --pool takes predict's grammar and refuses a named pool and a
// second one.
func TestWhatIfRefusals(t *testing.T) {
	t.Parallel()
	serial := fixtureTrace(t, "serial")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"analyze", "--what-if", "cores=4", serial}, []string{"--what-if cores=4: analyze evaluates remove=, scale= and overlap=", "latscope predict --what-if cores=4", "(or --cores 4:"}},
		{[]string{"analyze", "--predict", "pool=withConn:2", serial}, []string{"--predict pool=withConn:2: analyze", "latscope predict --what-if pool=withConn:2"}},
		{[]string{"analyze", "--what-if", "remove=lockedSection", "--what-if", "rate=10", serial}, []string{"--what-if rate=10: analyze", "latscope predict"}},
		{[]string{"compare", "--what-if", "clients=40", serial, serial}, []string{"--what-if clients=40: compare evaluates", "latscope predict --what-if clients=40"}},
		{[]string{"compare", "--predict", "pool=3", serial, serial}, []string{"--predict pool=3: compare", "latscope predict"}},
		{[]string{"analyze", "--pool", "withConn:10", serial}, []string{"--pool withConn:10: analyze caps throughput", "(--pool 10)", "latscope predict --pool withConn:10"}},
		{[]string{"analyze", "--pool", "3", "--pool", "4", serial}, []string{"--pool given 2 times", "latscope predict"}},
		{[]string{"analyze", "--pool", "x", serial}, []string{"flag -pool: want a whole number from 0", "NAME:SIZE"}},
		{[]string{"predict", "--pool", "0", serial}, []string{"flag -pool: want a whole number from 1", "NAME:SIZE"}},
	} {
		_, _, err := runCLI(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", tc.args, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error of more than one line: %q", tc.args, err)
		}
		if got := exitStatus(err); got != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, got)
		}
	}
	// SIZE alone caps analyze's throughput as before; 0 is no cap.
	for _, p := range []string{"0", "2"} {
		if _, _, err := runCLI(t, "analyze", "--pool", p, serial); err != nil {
			t.Errorf("analyze --pool %s: %v", p, err)
		}
	}
}

// TestPoolFlagGrammar: --pool parses SIZE and NAME:SIZE alike in analyze
// (0 allowed: no cap) and predict, as queueing.ParsePool does pool=.
func TestPoolFlagGrammar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		min  int
		in   string
		want queueing.PoolSpec
		ok   bool
	}{
		{0, "10", queueing.PoolSpec{Size: 10}, true},
		{0, "withConn:10", queueing.PoolSpec{Name: "withConn", Size: 10}, true},
		{0, "0", queueing.PoolSpec{}, true},
		{1, "0", queueing.PoolSpec{}, false},
		{1, "10", queueing.PoolSpec{Size: 10}, true},
		{1, "sem:1", queueing.PoolSpec{Name: "sem", Size: 1}, true},
		{1, "sem:1000001", queueing.PoolSpec{}, false},
		{0, "-3", queueing.PoolSpec{}, false},
		{0, "a:b", queueing.PoolSpec{}, false},
	} {
		var pools []queueing.PoolSpec
		err := (&poolFlag{pools: &pools, min: tc.min}).Set(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("min %d, %q: error %v, want ok %v", tc.min, tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (len(pools) != 1 || pools[0] != tc.want) {
			t.Errorf("min %d, %q: %v, want %v", tc.min, tc.in, pools, tc.want)
		}
	}
}
