package budget

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/frame"
)

// PathSep separates the frames of a call path in a term's display name
// ("handlers.ListOrders › store.(*Store).query"). In names given to
// --what-if, --frame and compare, " › ", "›" and ">" all separate frames.
const PathSep = " › "

// pathKey joins a call path into a map key.
func pathKey(path []string) string { return strings.Join(path, "\n") }

// Matches reports whether the term lies beneath a frame that name names.
// name is one frame ("GetUser", matched as MatchName matches a frame) or
// frames of the call path from outer to inner ("ListOrders>query": query
// beneath ListOrders, with any frames between them). A frame also matches
// the closures declared inside it: "handle" matches "main.handle.func2.1",
// so a goroutine a handler starts is beneath it.
func (t Term) Matches(name string) bool {
	parts := splitName(name)
	return matchRun(t.path(), parts) >= 0 || t.mechanismRun(parts) >= 0
}

// mechanismRun is matchRun for a name of two frames or more whose last
// names the wait's mechanism beneath the others: "sharedSection>Lock" is
// the mutex wait beneath sharedSection and not sharedSection's CPU, which
// "sharedSection" alone names with it (docs/method.md §5). It returns the
// index in the call path of the frame the part before the mechanism
// matched, or -1.
func (t Term) mechanismRun(parts []string) int {
	n := len(parts)
	if n < 2 || t.Mechanism == "" || !matchFrame(t.Mechanism, parts[n-1]) {
		return -1
	}
	return matchRun(t.path(), parts[:n-1])
}

// path returns the term's call path, or its frame alone for terms built
// without one (JVM recordings).
func (t Term) path() []string {
	if len(t.Path) > 0 || t.Frame == "" {
		return t.Path
	}
	return []string{t.Frame}
}

// splitName splits a call-path name into its frames.
func splitName(name string) []string {
	name = strings.ReplaceAll(name, "›", ">")
	parts := strings.Split(name, ">")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// matchRun returns the index in path of the innermost frame that matches
// the last of parts and has the others above it, in order (not necessarily
// adjacent), or -1.
func matchRun(path, parts []string) int {
	last := len(parts) - 1
	for end := len(path) - 1; end >= last; end-- {
		if !matchFrame(path[end], parts[last]) {
			continue
		}
		i := last - 1
		for j := end - 1; j >= 0 && i >= 0; j-- {
			if matchFrame(path[j], parts[i]) {
				i--
			}
		}
		if i < 0 {
			return end
		}
	}
	return -1
}

// matchedFrames returns, for a match of parts ending at end, the frames
// that matched each part (innermost matches first, then outward).
func matchedFrames(path, parts []string, end int) []string {
	out := make([]string, len(parts))
	i := len(parts) - 1
	for j := end; j >= 0 && i >= 0; j-- {
		if matchFrame(path[j], parts[i]) {
			out[i] = path[j]
			i--
		}
	}
	return out
}

// matchFrame reports whether fn, or the function whose closure fn is,
// matches name.
func matchFrame(fn, name string) bool {
	if name == "" {
		return false
	}
	for {
		if MatchName(fn, name) {
			return true
		}
		outer, ok := enclosing(fn)
		if !ok {
			return false
		}
		fn = outer
	}
}

// enclosing strips one closure level: "main.handle.func2.1" → "main.handle.func2",
// "main.handle.func2" → "main.handle".
func enclosing(fn string) (string, bool) {
	pkgEnd := len(frame.Package(fn))
	i := strings.LastIndexByte(fn, '.')
	if i <= pkgEnd {
		return "", false
	}
	last := fn[i+1:]
	if isDigits(last) || strings.HasPrefix(last, "func") && isDigits(last[4:]) || strings.HasPrefix(last, "gowrap") && isDigits(last[6:]) {
		return fn[:i], true
	}
	return "", false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// declared returns fn without its closure suffixes: the function as written.
func declared(fn string) string {
	for {
		outer, ok := enclosing(fn)
		if !ok {
			return fn
		}
		fn = outer
	}
}

// NameCandidates returns the distinct call paths, each ending at the frame
// name matched, of the terms that name matches; more than one means the
// name is ambiguous. Paths are in display form.
func NameCandidates(terms []Term, name string) []string {
	parts := splitName(name)
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		p := t.path()
		end := matchRun(p, parts)
		var run, shown []string
		switch {
		case end >= 0:
			run, shown = matchedFrames(p, parts, end), p[:end+1]
		case t.mechanismRun(parts) >= 0:
			end = t.mechanismRun(parts)
			run = append(matchedFrames(p, parts[:len(parts)-1], end), t.Mechanism)
			shown = append(slices.Clone(p[:end+1]), t.Mechanism)
		default:
			continue
		}
		// Candidates differ by the functions matched, not by what lies
		// beneath them or by closures of one function.
		for i := range run {
			run[i] = declared(run[i])
		}
		k := pathKey(run)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, displayPath(shown))
	}
	sort.Strings(out)
	return out
}

// CheckName returns an error when name matches frames of more than one
// function, listing the candidate paths; nil when it matches one or none.
func CheckName(terms []Term, name string) error {
	parts := splitName(name)
	fns := map[string]bool{}
	for _, t := range terms {
		p := t.path()
		if end := matchRun(p, parts); end >= 0 {
			fns[declared(p[end])] = true
		} else if t.mechanismRun(parts) >= 0 {
			fns[t.Mechanism] = true
		}
	}
	if len(fns) < 2 {
		return nil
	}
	return fmt.Errorf("%q is ambiguous: it names %d functions (%s); name one, or a call path such as %q",
		name, len(fns), strings.Join(NameCandidates(terms, name), "; "), example(terms, name))
}

// example suggests a longer, unambiguous name for an ambiguous one.
func example(terms []Term, name string) string {
	c := NameCandidates(terms, name)
	if len(c) == 0 {
		return name
	}
	p := strings.Split(c[0], PathSep)
	if len(p) >= 2 {
		return shortFunc(p[len(p)-2]) + ">" + shortFunc(p[len(p)-1])
	}
	return p[0]
}

// shortFunc drops the package: "store.(*Store).query" → "(*Store).query".
func shortFunc(fn string) string {
	fn = frame.Short(fn)
	if i := strings.IndexByte(fn, '.'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// displayPath joins frames with PathSep, each without its package's
// directories, and without its package at all when the frame before it is
// of the same Go package: "store.(*Store).Query › (*Store).query". (JVM
// methods, "com.acme.Repo.find", keep their names whole.)
func displayPath(p []string) string {
	s := make([]string, len(p))
	for i, f := range p {
		s[i] = frame.Short(f)
		if i > 0 && samePackage(f, p[i-1]) {
			s[i] = shortFunc(f)
		}
	}
	return strings.Join(s, PathSep)
}

// samePackage reports whether two Go function names are of one package
// (a path with a slash, or main).
func samePackage(a, b string) bool {
	pa := frame.Package(a)
	return pa == frame.Package(b) && (pa == "main" || strings.Contains(pa, "/"))
}

// Labels returns each term's display name: the shortest suffix of its call
// path that no other call path among terms ends in, each frame without its
// package directories. A term whose innermost frame alone is unique keeps
// that frame's short name; a term without an application frame is
// "(no app frame)".
func Labels(terms []Term) []string {
	paths := map[string][]string{}
	for _, t := range terms {
		if p := t.path(); len(p) > 0 {
			paths[pathKey(p)] = p
		}
	}
	// Group distinct paths by innermost frame: only those can collide.
	byLeaf := map[string][][]string{}
	for _, p := range paths {
		leaf := p[len(p)-1]
		byLeaf[leaf] = append(byLeaf[leaf], p)
	}
	labels := make([]string, len(terms))
	cache := map[string]string{}
	for i, t := range terms {
		p := t.path()
		if len(p) == 0 {
			labels[i] = "(no app frame)"
			continue
		}
		k := pathKey(p)
		if l, ok := cache[k]; ok {
			labels[i] = l
			continue
		}
		n := uniqueSuffix(p, byLeaf[p[len(p)-1]])
		cache[k] = displayPath(p[len(p)-n:])
		labels[i] = cache[k]
	}
	return labels
}

// uniqueSuffix returns the length of p's shortest suffix that no other path
// of others ends in (len(p) when every suffix is shared).
func uniqueSuffix(p []string, others [][]string) int {
	for n := 1; n < len(p); n++ {
		clash := false
		for _, q := range others {
			if len(q) >= n && !slices.Equal(q, p) && slices.Equal(q[len(q)-n:], p[len(p)-n:]) {
				clash = true
				break
			}
		}
		if !clash {
			return n
		}
	}
	return len(p)
}
