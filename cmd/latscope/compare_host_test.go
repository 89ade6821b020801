package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareHost: compare sets the CPU each trace's Ps had per running
// second side by side (render.HostCheck) and says when the host lent the
// second trace less. The truth is the service's own timers around
// pricing.Compute (its wall time and its thread's CPU time, in the
// corpus's truth files): on the CPU-saturated pair the after run's
// pricing.Compute ran 1.16× its CPU, the before run's 1.03×, so the host
// lent the after run less CPU per running second, which compare must say;
// a trace against itself has nothing to say.
func TestCompareHost(t *testing.T) {
	wallPerCPU := func(name string) float64 {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name+".truth.json"))
		if err != nil {
			t.Fatal(err)
		}
		var truth struct {
			Service map[string]float64 `json:"service"`
		}
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		return truth.Service["compute_wall_ms"] / truth.Service["compute_cpu_ms"]
	}
	before, after := "gin-cpu-sat", "gin-cpu-sat-half"
	wb, wa := wallPerCPU(before), wallPerCPU(after)
	if wa <= wb {
		t.Fatalf("the truth files no longer say the host lent %s less CPU: pricing.Compute's wall per CPU %.3f before, %.3f after", after, wb, wa)
	}
	stdout, stderr, err := runCLI(t, "compare", "--json", "--what-if", "scale=pricing.Compute:0.5", corpusTrace(before), corpusTrace(after))
	if err := ignoreMiss(err); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var c struct {
		Host *struct {
			Before     float64 `json:"before_proc_cpu_share"`
			After      float64 `json:"after_proc_cpu_share"`
			Differs    bool    `json:"differs"`
			RunningPct float64 `json:"running_change_pct"`
		} `json:"host"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	if c.Host == nil {
		t.Fatalf("no host check in the JSON:\n%s", stdout)
	}
	t.Logf("Ps' CPU per running second %.3f before, %.3f after (Ps ran %+.1f%% per CPU second); pricing.Compute's wall per CPU %.3f before, %.3f after (%+.1f%%)",
		c.Host.Before, c.Host.After, c.Host.RunningPct, wb, wa, 100*(wa/wb-1))
	if !c.Host.Differs || c.Host.After >= c.Host.Before || c.Host.RunningPct <= 0 {
		t.Errorf("compare does not say the host lent the after trace less CPU: %+v", *c.Host)
	}
	text, stderr, err := runCLI(t, "compare", "--what-if", "scale=pricing.Compute:0.5", corpusTrace(before), corpusTrace(after))
	if err := ignoreMiss(err); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(text, "\nhost: the Ps' threads had a CPU for") || !strings.Contains(text, "lent the second less CPU") {
		t.Errorf("compare's text does not say it:\n%s", text)
	}
	self, stderr, err := runCLI(t, "compare", "--what-if", "scale=pricing.Compute:0.5", corpusTrace(before), corpusTrace(before))
	if err := ignoreMiss(err); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.Contains(self, "\nhost:") {
		t.Errorf("a trace against itself has a host line:\n%s", self)
	}
}
