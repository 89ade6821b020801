package burst

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
)

// TestScenario runs `latscope-lab burst` on short windows with real
// burst-serve processes (this test binary in child mode), real CPU
// profiles and traces, and asserts the scenario's checks (docs/method.md §9): the
// finding fires on the bursty variant and not on the fixed one, and the
// fixed variant lowers CPU per event.
func TestScenario(t *testing.T) {
	tier.Timing(t)
	env := testEnv(t, shortProfile)
	o := DefaultOptions
	o.Variants = []Variant{{Name: "spawn", Mode: Spawn, Procs: 32}, {Name: "pool", Mode: Pool, Procs: 32}, {Name: "fixed", Mode: Fixed, Procs: 32}}
	out, err := RunOptions(t.Context(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.Markdown)
	for _, c := range out.Checks {
		t.Logf("check %v: %s: want %s; got %s", c.OK, c.Name, c.Want, c.Got)
	}
	want := map[string]bool{
		"spawn: the scheduler-overhead finding fires on its trace":                true,
		"fixed: no scheduler-overhead finding on its trace or its profile":        true,
		"fixed lowers CPU per event against spawn (independent counter)":          true,
		"the scheduler share of spawn predicts the saving of fixed (lower bound)": true,
	}
	for _, c := range out.Checks {
		if !want[c.Name] {
			t.Errorf("unexpected check %q", c.Name)
			continue
		}
		delete(want, c.Name)
		if !c.OK {
			t.Errorf("check failed: %s: want %s; got %s", c.Name, c.Want, c.Got)
		}
	}
	for name := range want {
		t.Errorf("missing check %q", name)
	}
	res := out.JSON.(*Result)
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("JSON: %v", err)
	}
	for _, m := range res.Variants {
		for _, f := range []string{m.Files.Log, m.Files.Profile, m.Files.Trace} {
			if st, err := os.Stat(filepath.Join(env.Out, f)); err != nil || st.Size() == 0 && !strings.HasSuffix(f, ".log") {
				t.Errorf("%s: %v", f, err)
			}
		}
		if m.GOMAXPROCS != 32 || m.Median.Events == 0 || m.Median.CPU <= 0 {
			t.Errorf("%s: GOMAXPROCS %d, %d events, CPU %v", m.Variant.Name, m.GOMAXPROCS, m.Median.Events, m.Median.CPU)
		}
	}
	if _, ok := lab.Lookup("burst"); !ok {
		t.Error("scenario burst is not registered")
	}
}
