package corpus

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/whatif"
)

// keptPair is a recording before a change and one with the change made for
// real, analysed: the before one with the what-if's prediction.
type keptPair struct {
	res, resA *budget.Result
	g, gA     *budget.Group // the request type of the after recording's truth, in each
	after     *truth
	rel, relA string // the recordings' paths from the repository's root
}

// analyzePair analyses the pair (before, after) of corpusDir, the before
// recording with spec's prediction; with LATSCOPE_CORPUS_DIR set, a pair
// that directory does not hold is skipped.
func analyzePair(t *testing.T, before, after string, spec whatif.Spec) *keptPair {
	t.Helper()
	dir := corpusDir(t)
	for _, name := range []string{before, after} {
		if _, err := os.Stat(filepath.Join(dir, name+".trace")); err != nil && os.Getenv("LATSCOPE_CORPUS_DIR") != "" {
			t.Skipf("LATSCOPE_CORPUS_DIR holds no %s.trace: record the pair to judge it", name)
		}
	}
	p := &keptPair{after: readTruth(t, filepath.Join(dir, after+".truth.json"))}
	var err error
	if p.rel, err = filepath.Rel(root, filepath.Join(dir, before+".trace")); err != nil {
		t.Fatal(err)
	}
	if p.relA, err = filepath.Rel(root, filepath.Join(dir, after+".trace")); err != nil {
		t.Fatal(err)
	}
	opts := budget.DefaultOptions
	opts.Predictions = whatif.Predictions([]whatif.Spec{spec})
	r, err := pipeline.File(context.Background(), filepath.Join(root, p.rel), pipeline.Options{
		Budget: opts,
		Report: render.Inputs{File: p.rel, CPUSeconds: -1, MinShare: 0.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	ra, err := analyze(t, p.relA)
	if err != nil {
		t.Fatal(err)
	}
	p.res, p.resA = r.Result, ra.Result
	i := slices.IndexFunc(p.res.Groups, func(g *budget.Group) bool { return g.Name == p.after.Task })
	j := slices.IndexFunc(p.resA.Groups, func(g *budget.Group) bool { return g.Name == p.after.Task })
	// a model spec (pool=, clients=, …) has no timeline prediction
	if i < 0 || j < 0 || !spec.Model() && len(p.res.Groups[i].Predictions) != 1 {
		t.Fatalf("no request type %q in both traces, or no prediction", p.after.Task)
	}
	p.g, p.gA = p.res.Groups[i], p.resA.Groups[j]
	return p
}
