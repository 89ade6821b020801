package budget

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/latscope/latscope/internal/tracein"
)

// TestFixShortcutExact: the fix column computed with its shortcuts —
// critpath.TailGains, and critpath.Removals, which simulates only what a
// removal can change — is, term by term, the one every term's whole
// simulation gives, on the kept recordings of real services and of the
// demo service (forks, joins, errgroups, pools, locks, hand-offs, CPU
// samples); so is the column with Removals asked every term.
func TestFixShortcutExact(t *testing.T) {
	t.Parallel()
	var names []string
	for _, dir := range []string{"../../testdata/corpus", "../fixture/testdata", "../queueing/testdata"} {
		n, err := filepath.Glob(filepath.Join(dir, "*.trace"))
		if err != nil || len(n) == 0 {
			t.Fatalf("kept recordings under %s: %d, %v", dir, len(n), err)
		}
		names = append(names, n...)
	}
	for _, name := range names {
		t.Run(filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			fixShortcutsExact(t, name)
		})
	}
}

// TestFixShortcutExactTrace is TestFixShortcutExact on the trace named by
// LATSCOPE_FIX_TRACE (a large one: lab/bench/gentrace -size 100MB), with the
// simulations and simulated segments of each way logged.
func TestFixShortcutExactTrace(t *testing.T) {
	name := os.Getenv("LATSCOPE_FIX_TRACE")
	if name == "" {
		t.Skip("LATSCOPE_FIX_TRACE not set")
	}
	fixShortcutsExact(t, name)
}

// fixShortcutsExact compares the fix columns of the trace at name.
func fixShortcutsExact(t *testing.T, name string) {
	slow := fixes(t, name, fixWhole)
	for _, way := range []fixWay{fixShipped, fixRemovals, fixTailWhole} {
		if fast := fixes(t, name, way); !reflect.DeepEqual(fast, slow) {
			t.Errorf("fix %s %v, by whole simulations %v", way, fast, slow)
		}
	}
}

// fixWay is how the fix column is computed.
type fixWay int

const (
	fixShipped   fixWay = iota // TailGains, then Removals
	fixRemovals                // Removals for every term
	fixTailWhole               // TailGains, then whole simulations (as at 124ea15)
	fixWhole                   // whole simulations for every term
)

func (w fixWay) String() string {
	return [...]string{"with TailGains and Removals", "with Removals alone", "with TailGains and whole simulations", "by whole simulations"}[w]
}

// fixes analyses the trace at path and returns every group's fix per term.
func fixes(t *testing.T, path string, way fixWay) map[string][]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracein.NewReader(path, f)
	if err != nil {
		t.Fatal(err)
	}
	a := New(DefaultOptions, r.Stacks())
	a.scratch.noTail = way == fixRemovals || way == fixWhole
	a.scratch.whole = way == fixTailWhole || way == fixWhole
	a.scratch.count, a.scratch.rm.Count = true, true
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		a.Event(&ev)
	}
	res := a.Finalize()
	sims, segs, refs, refSegs := a.scratch.rm.Counts()
	t.Logf("fix %s: %d simulations, %d segments simulated (references: %d, %d; whole: %d, %d)",
		way, sims+a.scratch.fixSims, segs+a.scratch.fixSegs, refs, refSegs, a.scratch.fixSims, a.scratch.fixSegs)
	out := map[string][]int64{}
	for _, g := range res.Groups {
		for _, ts := range append(append([]TermStat(nil), g.Terms...), g.CPUTerms...) {
			out[g.Name] = append(out[g.Name], int64(ts.Term), ts.Fix)
		}
	}
	return out
}
