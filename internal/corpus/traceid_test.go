package corpus

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
)

// TestTraceIDs: in a kept trace whose truth lists trace IDs (the
// OpenTelemetry bridge's, issue #32), Options.TraceID finds each: exactly
// one request, in the group of the route the client asked; and each group
// lists its slowest requests' trace IDs.
func TestTraceIDs(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(root, "testdata/corpus/*.truth.json"))
	n := 0
	for _, f := range files {
		tr := readTruth(t, f)
		if len(tr.TraceIDs) == 0 {
			continue
		}
		rel := "testdata/corpus/" + tr.Name + ".trace"
		all, err := analyze(t, rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range all.Result.Groups {
			if _, ok := tr.Routes[g.Name]; ok && (len(g.SlowTraces) == 0 || g.Traced != g.Count) {
				t.Errorf("%s: %s: %d slow trace IDs listed, %d of %d requests traced", tr.Name, g.Name, len(g.SlowTraces), g.Traced, g.Count)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(tr.TraceIDs)) {
			n++
			opts := budget.DefaultOptions
			opts.TraceID = id
			r, err := analyzeWith(t, rel, opts)
			if err != nil {
				t.Errorf("%s: trace %s: %v", tr.Name, id, err)
				continue
			}
			gs := r.Result.Groups
			if len(gs) != 1 || gs[0].Name != tr.TraceIDs[id] || gs[0].Count != 1 || gs[0].SlowTraces[0].TraceID.String() != id {
				t.Errorf("%s: trace %s: %d groups (%v), want one request of %s", tr.Name, id, len(gs), gs, tr.TraceIDs[id])
				continue
			}
			t.Logf("%s: trace %s: one request of %s, %.3f ms", tr.Name, id, gs[0].Name, float64(gs[0].Latency.Max)/1e6)
		}
	}
	if n == 0 {
		t.Fatal("no truth lists trace IDs")
	}
}
