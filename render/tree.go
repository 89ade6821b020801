package render

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/frame"
)

// callNode is one frame of the call-path tree: its time is the sum of its
// children's, and a term is a leaf beneath the innermost frame of its path.
type callNode struct {
	label          string
	critical, wait float64
	children       []*callNode
	index          map[string]*callNode
}

func (n *callNode) child(key, label string) *callNode {
	if n.index == nil {
		n.index = map[string]*callNode{}
	}
	c := n.index[key]
	if c == nil {
		c = &callNode{label: label}
		n.index[key] = c
		n.children = append(n.children, c)
	}
	return c
}

// callTree rolls a group's terms up by call path.
func callTree(terms []TermJSON) *callNode {
	root := &callNode{}
	for _, t := range terms {
		n := root
		for _, f := range t.AppPath {
			n = n.child(f, frame.Short(f))
		}
		if len(t.AppPath) == 0 {
			n = n.child("", "(no app frame)")
		}
		leaf := "[" + t.Kind + "]"
		if t.Mechanism != "" {
			leaf = "[" + frame.Short(t.Mechanism) + ", " + t.Kind + "]"
		}
		n = n.child("\x00"+t.Mechanism+"\x00"+t.Kind, leaf)
		n.critical += t.CriticalMs
		n.wait += t.WaitMs
	}
	root.sum()
	return root
}

// sum sets every inner node's time to the sum of its children's and orders
// children by critical time.
func (n *callNode) sum() {
	if len(n.children) == 0 {
		return
	}
	n.critical, n.wait = 0, 0
	for _, c := range n.children {
		c.sum()
		n.critical += c.critical
		n.wait += c.wait
	}
	sort.SliceStable(n.children, func(i, j int) bool {
		if n.children[i].critical != n.children[j].critical {
			return n.children[i].critical > n.children[j].critical
		}
		return n.children[i].wait > n.children[j].wait
	})
}

// writeTree prints the group's waits rolled up by call path (--tree).
func (r *Report) writeTree(ew *errWriter, g *GroupJSON) {
	root := callTree(g.Terms)
	if len(root.children) == 0 {
		return
	}
	ew.printf("\nwaits by call path, ms per request (a frame's time is the sum of the rows beneath it)\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "critical\twait\t\n")
	for _, row := range root.rows(0, nil) {
		fmt.Fprintf(tw, "%.2f\t%.2f\t  %s%s\n", row.critical, row.wait, strings.Repeat("  ", row.depth), row.label)
	}
	tw.Flush()
}

// treeRow is one printed row of the tree.
type treeRow struct {
	depth          int
	label          string
	critical, wait float64
}

// rows lists the nodes beneath n, depth first.
func (n *callNode) rows(depth int, out []treeRow) []treeRow {
	for _, c := range n.children {
		out = append(out, treeRow{depth, c.label, c.critical, c.wait})
		out = c.rows(depth+1, out)
	}
	return out
}
