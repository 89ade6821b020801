package tier

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Tests are the timing tier's tests: test function names by package
// directory (relative, "./" first, as go test takes it).
type Tests map[string][]string

// List finds, in the _test.go files under root (testdata and hidden
// directories left out, as the go command does), the test functions whose
// body calls tier.Timing or tier.Busy.
func List(root string) (Tests, error) {
	return list(root, "Timing", "Busy")
}

// ListBusy finds the test functions whose body calls tier.Busy, and
// ListQuiet those that call tier.Timing: together, List.
func ListBusy(root string) (Tests, error)  { return list(root, "Busy") }
func ListQuiet(root string) (Tests, error) { return list(root, "Timing") }

// list finds the test functions whose body calls one of the named
// functions of package tier.
func list(root string, calls ...string) (Tests, error) {
	out := Tests{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		names, err := timingTests(path, calls)
		if err != nil {
			return err
		}
		if len(names) > 0 {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			dir := "./" + filepath.ToSlash(rel)
			if rel == "." {
				dir = "."
			}
			out[dir] = append(out[dir], names...)
		}
		return nil
	})
	return out, err
}

// timingTests returns the Test functions of one file that call one of the
// named functions of package tier.
func timingTests(path string, calls []string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := "tier" // the name the file imports the package by
	for _, im := range f.Imports {
		if strings.Trim(im.Path.Value, `"`) == "github.com/latscope/latscope/internal/tier" && im.Name != nil {
			local = im.Name.Name
		}
	}
	var names []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
			continue
		}
		found := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return !found
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(calls, sel.Sel.Name) {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					found = true
				}
			}
			return !found
		})
		if found {
			names = append(names, fn.Name.Name)
		}
	}
	return names, nil
}

// Pattern is a go test -run pattern matching exactly the tests' names.
func (ts Tests) Pattern() string {
	var all []string
	for _, names := range ts {
		for _, n := range names {
			all = append(all, regexp.QuoteMeta(n))
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) == 0 {
		return "^$"
	}
	return "^(" + strings.Join(all, "|") + ")$"
}

// Packages are the directories that hold a timing test, sorted.
func (ts Tests) Packages() []string {
	var out []string
	for d := range ts {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
