package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPredictGolden runs `latscope predict` on the serial fixture trace
// (a real trace of the demo service: 4 clients) and compares its output
// with testdata (go test -update rewrites it).
func TestPredictGolden(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	cases := []struct {
		name string
		args []string
	}{
		{"predict-serial.stdout", []string{"predict", "--clients", "4", "--what-if", "remove=callUpstream",
			"--what-if", "overlap=callUpstream,queryDB", "--what-if", "clients=40", "--what-if", "cores=1", serial}},
		{"predict-serial-open.stdout", []string{"predict", "--open", "--what-if", "rate=100", "--what-if", "rate=10000",
			"--what-if", "cores=1", serial}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, c.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			golden(t, c.name, stdout)
		})
	}
}

func TestPredictCLI(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	stdout, _, err := runCLI(t, "predict", "--json", "--clients", "4", "--what-if", "remove=callUpstream", serial)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Validation struct {
			Residual float64 `json:"mean_residual_pct"`
		} `json:"validation"`
		Outcomes []struct {
			After struct {
				MeanMs float64 `json:"mean_ms"`
			} `json:"after"`
			P99Note string `json:"p99_note"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Outcomes) != 1 || v.Outcomes[0].After.MeanMs <= 0 || v.Outcomes[0].P99Note == "" {
		t.Errorf("JSON: %s", stdout)
	}
	bad := []struct {
		args []string
		msg  string
	}{
		{[]string{"predict", "--pool", "x:0", serial}, "NAME:SIZE"},
		{[]string{"predict", "--what-if", "pool=nosuch:2", serial}, "no modelled pool"},
		{[]string{"predict", "--pool", "nosuchframe:2", serial}, "no wait"},
		{[]string{"predict"}, "exactly one trace"},
		{[]string{"predict", "--open", "--clients", "4", serial}, "--clients applies to the closed model"},
		{[]string{"predict", "--rate", "-1", serial}, "-rate"},
		{[]string{"predict", "--clients", "4", "--what-if", "rate=10", serial}, "the model is closed"},
		{[]string{"predict", "--rate", "50", "--what-if", "clients=10", serial}, "the model is open"},
	}
	for _, b := range bad {
		_, _, err := runCLI(t, b.args...)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%v: err %v, want one saying %q", b.args, err, b.msg)
		}
	}
}
