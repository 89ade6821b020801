package budget

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/latscope/latscope/internal/tracein"
)

// TestFixShortcutExact: the fix column computed with critpath.TailGains'
// shortcut is, term by term, the one every term's simulation gives, on
// the kept recordings of real services and of the demo service (forks,
// joins, errgroups, pools, locks, hand-offs, CPU samples).
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
			fast := fixes(t, name, false)
			slow := fixes(t, name, true)
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("fix by shortcut %v, by simulation %v", fast, slow)
			}
		})
	}
}

// fixes analyses the trace at path and returns every group's fix per term.
func fixes(t *testing.T, path string, simulateAll bool) map[string][]int64 {
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
	opts := DefaultOptions
	opts.simulateEveryFix = simulateAll
	a := New(opts, r.Stacks())
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		a.Event(&ev)
	}
	res := a.Finalize()
	out := map[string][]int64{}
	for _, g := range res.Groups {
		for _, ts := range append(append([]TermStat(nil), g.Terms...), g.CPUTerms...) {
			out[g.Name] = append(out[g.Name], int64(ts.Term), ts.Fix)
		}
	}
	return out
}
