package render

import (
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/termsafe"
)

// CallNode is one frame of the call-path tree of a request type's waits
// and CPU (ms per request). An inner node's times are the sums of its
// children's; each term is a leaf, "[mechanism, kind]" ("[running]" for a
// frame's CPU), beneath the innermost frame of its call path. The root
// holds the whole.
type CallNode struct {
	Label          string
	Frame          string // the full frame name; "" for leaves and the root
	Kind           string // a leaf's kind of wait; "" for frames
	Critical, Wait float64
	Children       []*CallNode // most critical first
	index          map[string]*CallNode
}

func (n *CallNode) child(key, label string) *CallNode {
	if n.index == nil {
		n.index = map[string]*CallNode{}
	}
	c := n.index[key]
	if c == nil {
		c = &CallNode{Label: label}
		n.index[key] = c
		n.Children = append(n.Children, c)
	}
	return c
}

// TreeTerms are the terms a group's call tree is made of: its waits and
// the CPU of its frames.
func (g *Group) TreeTerms() []Term {
	return append(append(make([]Term, 0, len(g.Terms)+len(g.CPUTerms)), g.Terms...), g.CPUTerms...)
}

// CallTree rolls a group's terms up by call path.
func CallTree(terms []Term) *CallNode {
	root := &CallNode{}
	for _, t := range terms {
		n := root
		path := t.AppPath
		if len(path) == 0 && t.Frame != "" {
			path = []string{t.Frame}
		}
		for _, f := range path {
			n = n.child(f, frame.Short(f))
			n.Frame = f
		}
		if len(path) == 0 {
			n = n.child("", "(no app frame)")
		}
		leaf, key := "["+t.Kind+"]", "\x00"+t.Mechanism+"\x00"+t.Kind
		switch {
		case t.Mechanism != "":
			leaf = "[" + frame.Short(t.Mechanism) + ", " + t.Kind + "]"
		case t.Beneath:
			leaf, key = "["+budget.BeneathMechanism+", "+t.Kind+"]", key+"\x00beneath"
		}
		n = n.child(key, leaf)
		n.Kind = t.Kind
		n.Critical += t.Critical.Ms()
		n.Wait += t.Wait.Ms()
	}
	root.sum()
	return root
}

// sum sets every inner node's time to the sum of its children's and orders
// children by critical time.
func (n *CallNode) sum() {
	if len(n.Children) == 0 {
		return
	}
	n.Critical, n.Wait = 0, 0
	for _, c := range n.Children {
		c.sum()
		n.Critical += c.Critical
		n.Wait += c.Wait
	}
	sort.SliceStable(n.Children, func(i, j int) bool {
		if n.Children[i].Critical != n.Children[j].Critical {
			return n.Children[i].Critical > n.Children[j].Critical
		}
		return n.Children[i].Wait > n.Children[j].Wait
	})
}

// writeTree prints the group's waits and CPU rolled up by call path (--tree).
func (r *Report) writeTree(ew *errWriter, g *Group) {
	root := CallTree(g.TreeTerms())
	if len(root.Children) == 0 {
		return
	}
	what := "waits"
	if len(g.CPUTerms) > 0 {
		what = "waits and CPU"
	}
	ew.printf("\n%s by call path, ms per request (a frame's time is the sum of the rows beneath it)\n", what)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "critical\twait\t\n")
	for _, row := range root.Rows() {
		termsafe.Fprintf(tw, "%.2f\t%.2f\t  %s%s\n", row.Critical, row.Wait, strings.Repeat("  ", row.Depth), row.Label)
	}
	tw.Flush()
}

// CallRow is one node of a call tree with its depth (0 beneath the root).
type CallRow struct {
	Depth int
	*CallNode
}

// Rows lists the nodes beneath n, depth first.
func (n *CallNode) Rows() []CallRow { return n.rows(0, nil) }

func (n *CallNode) rows(depth int, out []CallRow) []CallRow {
	for _, c := range n.Children {
		out = append(out, CallRow{depth, c})
		out = c.rows(depth+1, out)
	}
	return out
}
