// Package archtest holds the test that keeps docs/architecture.md's layers
// true: it reads the import graph of every package in the repository and
// fails when an import runs against the drawn direction.
package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/latscope/latscope/"

// The layers of docs/architecture.md, lowest first. A package may import
// packages of its own layer and of the layers below it, never above.
// Packages not named here are test support (see support) or the lab and
// bench, which may import any layer.
var layers = []struct {
	name     string
	packages []string
}{
	{"base", []string{"tracelog", "java", "internal/frame", "internal/atomicfile", "internal/httpurl", "internal/opterr", "internal/quantile",
		"internal/sketch", "internal/stats", "internal/termsafe", "internal/units", "internal/sticky", "internal/tier", "internal/kept", "internal/golden", "internal/churn"}},
	{"input", []string{"internal/tracein", "internal/gotable", "internal/pglog", "internal/hostsig", "internal/hostsig/probe", "internal/dbhost", "internal/loadresult", "internal/jfr"}},
	{"model and analyses", []string{"internal/critpath", "internal/budget", "internal/sched", "internal/queueing",
		"internal/analysis", "internal/dbwait", "internal/triage", "internal/loadgen", "internal/capture", "internal/pgcluster", "internal/pgcluster/proclife", "internal/tcpproxy",
		"internal/whatif", "internal/demotrace", "internal/dbhostmetrics", "internal/jvm"}},
	{"report", []string{"internal/render", "internal/report/html", "internal/report/pprofexport",
		"internal/report/markdown", "internal/report/triagereport", "internal/report/dbwaitreport", "internal/report/loadreport"}},
	{"wiring", []string{"internal/pipeline", "internal/cli"}},
	{"commands", []string{"cmd/latscope"}},
}

// support are packages for tests only: nothing outside tests, the lab and
// bench imports them.
var support = []string{"internal/fixture", "internal/chromiumtest", "internal/pgcluster/pgtest", "internal/jfr/jfrtest",
	"internal/jfr/churntest", "internal/triage/promtest", "agent/internal/agenttest", "agent/internal/routertest", "internal/corpus", "internal/archtest",
	"internal/jfr/internal/mkrecordings", "internal/jfr/internal/svcpairs", "internal/tier/timingtests", "internal/cli/clitest", "internal/sched/schedtest"}

// known are imports against the layers that issue #31 (one model for Go and
// the JVM) is to remove. The test fails when one of them is gone, so that
// this list shrinks with the code. Each stays until a move that is not
// small: the reason is the entry's text. None is left: the JFR reader's
// imports of budget and critpath went with the JVM's request analysis to
// package jvm.
var known = map[string]string{}

// key is the entry of known that a violation "a -> b: why" falls under.
func key(v string) string {
	k, _, _ := strings.Cut(v, ":")
	return k
}

// rank is a package's layer, or -1 outside the layers.
func rank(pkg string) int {
	for i, l := range layers {
		if slices.Contains(l.packages, pkg) {
			return i
		}
	}
	return -1
}

// lab reports whether pkg is the lab module's (its benchmarks under lab/bench too): it may import any layer.
func lab(pkg string) bool {
	return pkg == "lab" || strings.HasPrefix(pkg, "lab/")
}

// agent reports whether pkg is the agent's: the agent and its adapters
// import only the contract (tracelog), their own packages and the agent's
// host probes.
func agent(pkg string) bool { return pkg == "agent" || strings.HasPrefix(pkg, "agent/") }

var agentMay = []string{"tracelog", "internal/hostsig", "internal/hostsig/probe", "internal/quantile"}

// graph lists every package of the repository (its nested modules too,
// testdata left out) with its imports inside the repository, paths
// relative to the top. It parses the import clauses of the non-test Go
// files itself, as `go list` would list them for any build tags: reading
// the files here, not in a go list child, lets go test's cache see them.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	const top = "../.."
	g := map[string][]string{}
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != top && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(top, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := g[pkg]; !ok {
			g[pkg] = nil
		}
		for _, im := range f.Imports {
			if p := strings.Trim(im.Path.Value, `"`); strings.HasPrefix(p, module) && !slices.Contains(g[pkg], strings.TrimPrefix(p, module)) {
				g[pkg] = append(g[pkg], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// violations lists the imports of g against the layers, as "a -> b: why".
func violations(g map[string][]string) []string {
	var out []string
	for pkg, imports := range g {
		for _, im := range imports {
			if why := check(pkg, im); why != "" {
				out = append(out, fmt.Sprintf("%s -> %s: %s", pkg, im, why))
			}
		}
	}
	slices.Sort(out)
	return out
}

// check says why pkg must not import im, or "" when it may.
func check(pkg, im string) string {
	switch {
	case lab(pkg), slices.Contains(support, pkg):
		if lab(im) && !lab(pkg) {
			return "test support imports the lab"
		}
		return ""
	case slices.Contains(support, im):
		return "the product imports a package for tests only"
	case lab(im):
		return "the product imports the lab"
	case agent(pkg):
		if !agent(im) && !slices.Contains(agentMay, im) {
			return "the agent imports more than the contract and its host probes"
		}
		return ""
	case agent(im):
		return "" // the agent's public API
	}
	rp, ri := rank(pkg), rank(im)
	switch {
	case rp < 0:
		return "a package outside docs/architecture.md's layers: place it in internal/archtest's layers"
	case ri < 0:
		return "imports a package outside the layers"
	case ri > rp:
		return fmt.Sprintf("layer %q imports layer %q above it", layers[rp].name, layers[ri].name)
	}
	return ""
}

// TestLayers fails on an import against docs/architecture.md's layers, and
// on an entry of known that the code no longer has.
func TestLayers(t *testing.T) {
	g := graph(t)
	if len(g) < 20 {
		t.Fatalf("go list found %d packages: run from the repository", len(g))
	}
	seen := map[string]bool{}
	for _, v := range violations(g) {
		if k := key(v); known[k] != "" {
			seen[k] = true
			continue
		}
		t.Errorf("%s", v)
	}
	for k, why := range known {
		if !seen[k] {
			t.Errorf("%s is gone (%s): remove it from internal/archtest's known list", k, why)
		}
	}
}

// TestCheckCatchesReversal: an input reader that imported the report
// layer, or the product that imported the lab, is refused.
func TestCheckCatchesReversal(t *testing.T) {
	for _, c := range []struct{ pkg, im string }{
		{"internal/tracein", "internal/render"},
		{"internal/jfr", "internal/budget"},
		{"internal/jfr", "internal/jvm"},
		{"internal/budget", "internal/pipeline"},
		{"internal/render", "cmd/latscope"},
		{"internal/budget", "lab/seed"},
		{"internal/render", "internal/fixture"},
		{"agent", "internal/budget"},
		{"internal/newthing", "internal/tracein"},
	} {
		if check(c.pkg, c.im) == "" {
			t.Errorf("%s -> %s passes, want refused", c.pkg, c.im)
		}
	}
	for _, c := range []struct{ pkg, im string }{
		{"internal/render", "internal/budget"},
		{"internal/jvm", "internal/jfr"},
		{"cmd/latscope", "internal/pipeline"},
		{"lab/seed", "internal/render"},
		{"internal/fixture", "internal/budget"},
		{"agent/agentchi", "agent"},
	} {
		if why := check(c.pkg, c.im); why != "" {
			t.Errorf("%s -> %s refused (%s), want allowed", c.pkg, c.im, why)
		}
	}
}
