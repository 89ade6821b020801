package render_test

import (
	"bytes"
	"flag"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestWriters renders the kept demo scenarios — a serial request, a
// fork/join, a pool, a hand-off — with what-ifs, a pool cap, a frame filter
// and the call tree, and compares the text and the JSON with their golden
// files (go test ./internal/render/ -update rewrites them). The writers are
// the report model's only formatting: every row they print comes from
// render.Build.
func TestWriters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario string
		predict  []string
		in       render.Inputs
	}{
		{"serial", []string{"overlap=callUpstream,queryDB", "remove=lockedSection", "scale=queryDB:0.5"}, render.Inputs{Pool: 4}},
		{"waitgroup", []string{"remove=callUpstream"}, render.Inputs{Tree: true}},
		{"pool", nil, render.Inputs{Frame: regexp.MustCompile("queryDB")}},
		{"handoff", nil, render.Inputs{MinShare: 0.5}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			rec := fixture.Scenario(t, tc.scenario)
			opts := budget.DefaultOptions
			for _, spec := range tc.predict {
				p, err := budget.ParsePrediction(spec)
				if err != nil {
					t.Fatal(err)
				}
				opts.Predictions = append(opts.Predictions, p)
			}
			res := fixture.Analyze(t, rec.Path, opts)
			in := tc.in
			in.File, in.CPUSeconds = tc.scenario+".trace", -1
			rep, err := render.Build(res, in)
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.scenario+".txt"), text.Bytes(), *update)
			golden.Check(t, filepath.Join("testdata", tc.scenario+".json"), js.Bytes(), *update)
		})
	}
}
