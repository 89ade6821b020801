package jvm

import (
	"strings"

	"github.com/latscope/latscope/internal/budget"
)

// regionTable interns application call paths: the regions of the regions
// line (thread time and CPU samples by where the code was). A region is a
// call path, not its innermost frame, so a helper that several callers
// share (a hashing or a remote-call helper) is split by caller instead of
// taking every caller's samples.
type regionTable struct {
	paths [][]string
	index map[string]int32
}

func newRegionTable() regionTable { return regionTable{index: map[string]int32{}} }

// id interns path.
func (t *regionTable) id(path []string) int32 {
	k := strings.Join(path, "\n")
	if i, ok := t.index[k]; ok {
		return i
	}
	t.index[k] = int32(len(t.paths))
	t.paths = append(t.paths, path)
	return int32(len(t.paths) - 1)
}

// names returns each region's name as terms are labelled (budget.Labels):
// its innermost frame, with as many callers as tell it apart from the
// other paths through that frame.
func (t *regionTable) names() []string {
	terms := make([]budget.Term, len(t.paths))
	for i, p := range t.paths {
		if len(p) > 0 {
			terms[i] = budget.Term{Frame: p[len(p)-1], Path: p}
		}
	}
	return budget.Labels(terms)
}
