// Package corpus tests the analysers on recorded real traces: the corpus
// of testdata/corpus (each with its ground truth) and the traces other
// packages keep (internal/budget/testdata/infer, internal/tracein/testdata/formats). Every
// test is deterministic: it reads committed files, starts no server and
// uses no network.
//
//	go test ./internal/corpus/            # compare with the goldens, assert the truth
//	go test ./internal/corpus/ -update    # rewrite the goldens
package corpus

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/render"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/")

// root is the repository's root, relative to this package.
const root = "../.."

// entry is one trace: its name in the goldens (set/NAME) and its path
// relative to the repository's root.
type entry struct{ name, rel string }

// sets are the trace directories the goldens cover, with the name of each.
var sets = []struct{ name, dir string }{
	{"corpus", "testdata/corpus"},
	{"infer", "internal/budget/testdata/infer"},
	{"formats", "internal/tracein/testdata/formats"},
}

func traces(t *testing.T) []entry {
	t.Helper()
	var out []entry
	for _, s := range sets {
		files, err := filepath.Glob(filepath.Join(root, s.dir, "*.trace"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no traces in %s", s.dir)
		}
		for _, f := range files {
			base := strings.TrimSuffix(filepath.Base(f), ".trace")
			out = append(out, entry{name: s.name + "/" + base, rel: s.dir + "/" + base + ".trace"})
		}
	}
	return out
}

// analyze runs the pipeline the CLI's analyze runs, with its defaults (no
// CPU profile, no independent CPU reading, terms under 0.5 % folded in the
// text). The report names the file by its path from the repository's root.
//
// A trace whose truth names the application's packages ("app") is analysed
// with them, as `--app` does.
func analyze(t *testing.T, rel string) (*pipeline.Report, error) {
	t.Helper()
	return analyzeWith(t, rel, budget.DefaultOptions)
}

func analyzeWith(t *testing.T, rel string, opts budget.Options) (*pipeline.Report, error) {
	t.Helper()
	in := render.Inputs{File: rel, CPUSeconds: -1, MinShare: 0.5}
	if tf := filepath.Join(root, strings.TrimSuffix(rel, ".trace")+".truth.json"); fileExists(tf) {
		if tr := readTruth(t, tf); len(tr.App) > 0 {
			opts.Rules.App, in.App = tr.App, tr.App
		}
	}
	return pipeline.File(context.Background(), filepath.Join(root, rel), pipeline.Options{Budget: opts, Report: in})
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestGolden compares each trace's report, JSON and text, byte for byte
// with its golden file. A trace the pipeline refuses or cannot read has
// its error as the golden instead.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, e := range traces(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			r, err := analyze(t, e.rel)
			if err != nil {
				golden.Check(t, filepath.Join("testdata", e.name+".err"), []byte(relErr(err)+"\n"), *update)
				return
			}
			for _, json := range []bool{true, false} {
				var b bytes.Buffer
				if err := r.Write(&b, json); err != nil {
					t.Fatal(err)
				}
				ext := ".txt"
				if json {
					ext = ".json"
				}
				golden.Check(t, filepath.Join("testdata", e.name+ext), b.Bytes(), *update)
			}
		})
	}
}

// relErr is an error's text with the path prefix that reaches the
// repository's root taken out, so the golden is the same wherever the
// repository is.
func relErr(err error) string {
	return strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
}

func TestTracesAreSmall(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(root, "testdata/corpus/*.trace"))
	var total int64
	for _, f := range files {
		n := fileSize(t, f)
		total += n
		if n > 400<<10 {
			t.Errorf("%s: %d bytes, over 400 KiB: record a shorter window or fewer clients", f, n)
		}
	}
	if total > 6<<20 {
		t.Errorf("the corpus is %d bytes, over 6 MiB", total)
	}
	t.Logf("%d corpus traces, %d bytes", len(files), total)
}

func ms(ns float64) string { return fmt.Sprintf("%.3f ms", ns/1e6) }

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
