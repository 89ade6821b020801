package render

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestCallTree(t *testing.T) {
	terms := []Term{
		{AppPath: []string{"main.GetUser", "acme/store.(*Store).query"}, Mechanism: "net.(*netFD).Read", Kind: "network", Critical: msd(4), Wait: msd(4)},
		{AppPath: []string{"main.ListOrders", "acme/store.(*Store).query"}, Mechanism: "net.(*netFD).Read", Kind: "network", Critical: msd(45), Wait: msd(45)},
		{AppPath: []string{"main.ListOrders", "acme/store.(*Store).query"}, Mechanism: "sync.(*Mutex).Lock", Kind: "sync", Critical: msd(1), Wait: msd(2)},
		{AppPath: []string{"main.ListOrders"}, Kind: "sleep", Critical: msd(0.5), Wait: msd(0.5)},
		{AppPath: []string{}, Mechanism: "net/http.(*persistConn).readLoop", Kind: "network", Critical: msd(0), Wait: msd(3)},
	}
	root := CallTree(terms)
	var check func(n *CallNode)
	check = func(n *CallNode) {
		if len(n.Children) == 0 {
			return
		}
		var c, w float64
		for _, ch := range n.Children {
			c += ch.Critical
			w += ch.Wait
			check(ch)
		}
		if math.Abs(c-n.Critical) > 1e-9 || math.Abs(w-n.Wait) > 1e-9 {
			t.Errorf("%s: critical %v wait %v, children sum to %v, %v", n.Label, n.Critical, n.Wait, c, w)
		}
	}
	check(root)
	if root.Critical != 50.5 || root.Children[0].Label != "main.ListOrders" || root.Children[0].Critical != 46.5 {
		t.Errorf("root %v, first child %q %v", root.Critical, root.Children[0].Label, root.Children[0].Critical)
	}
	var buf bytes.Buffer
	(&Report{}).writeTree(&errWriter{w: &buf}, &Group{Terms: terms})
	if !strings.Contains(buf.String(), "  main.ListOrders\n") || !strings.Contains(buf.String(), "      [net.(*netFD).Read, network]\n") {
		t.Errorf("text:\n%s", buf.String())
	}
	var rows []string
	for _, row := range root.Rows() {
		rows = append(rows, fmt.Sprintf("%.2f %.2f %s%s", row.Critical, row.Wait, strings.Repeat(">", row.Depth), row.Label))
	}
	want := []string{
		"46.50 47.50 main.ListOrders",
		"46.00 47.00 >store.(*Store).query",
		"45.00 45.00 >>[net.(*netFD).Read, network]",
		"1.00 2.00 >>[sync.(*Mutex).Lock, sync]",
		"0.50 0.50 >[sleep]",
		"4.00 4.00 main.GetUser",
		"4.00 4.00 >store.(*Store).query",
		"4.00 4.00 >>[net.(*netFD).Read, network]",
		"0.00 3.00 (no app frame)",
		"0.00 3.00 >[http.(*persistConn).readLoop, network]",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

func TestPathRows(t *testing.T) {
	var segs []Segment
	at := 0.0
	for i := range 30 { // running pieces split by 5 µs waits, then a wait
		segs = append(segs, Segment{Start: msd(at), Dur: msd(0.5), Goroutine: 7, Kind: "running"})
		at += 0.5
		if i < 29 {
			segs = append(segs, Segment{Start: msd(at), Dur: msd(0.005), Goroutine: 7, Kind: "runnable"})
			at += 0.005
		}
	}
	segs = append(segs, Segment{Start: msd(at), Dur: msd(20), Goroutine: 7, Kind: "network", Term: "main.query [net.(*netFD).Read, network]"})
	rows := pathRows(segs)
	if len(rows) != 2 || rows[0].pieces != 30 || math.Abs(rows[0].durMs-15) > 1e-9 || rows[0].what != "running" || rows[1].durMs != 20 {
		t.Errorf("rows = %+v", rows)
	}
}

// TestTermDeltas: terms pair by call path, and a call the fix moved pairs
// by its innermost frame when that is unique on both sides.
func TestTermDeltas(t *testing.T) {
	q := "acme/store.(*Store).query"
	before := []Term{
		{Name: "getUser › query", Frame: q, AppPath: []string{"main.getUser", q}, Kind: "network", Critical: msd(4.67)},
		{Name: "listOrders › query", Frame: q, AppPath: []string{"main.listOrders", q}, Kind: "network", Critical: msd(40)},
		{Name: "main.callUpstream", Frame: "main.callUpstream", AppPath: []string{"main.handle", "main.callUpstream"}, Kind: "select", Critical: msd(100)},
	}
	after := []Term{ // getUser removed; the upstream call moved into a goroutine
		{Name: "store.(*Store).query", Frame: q, AppPath: []string{"main.listOrders", q}, Kind: "network", Critical: msd(40.5)},
		{Name: "main.callUpstream", Frame: "main.callUpstream", AppPath: []string{"main.handle.func1", "main.callUpstream"}, Kind: "select", Critical: msd(101)},
	}
	got := map[string][2]float64{}
	for _, d := range termDeltas(before, after, CPU{CriticalRunning: msd(1)}, CPU{CriticalRunning: msd(1), CriticalRunnable: msd(26)}) {
		got[d.Name] = [2]float64{d.Before.Ms(), d.After.Ms()}
	}
	want := map[string][2]float64{"getUser › query": {4.67, 0}, "listOrders › query": {40, 40.5}, "main.callUpstream": {100, 101},
		"running (on CPU as Go sees it)": {1, 1}, "runnable (scheduler wait)": {0, 26}}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
}

func TestAppRule(t *testing.T) {
	for _, tt := range []struct {
		app         []string
		fallback    int
		jvm, module bool
		want        string
	}{
		{[]string{"github.com/acme/"}, 0, false, true, "packages under github.com/acme/ (as given)"},
		{nil, 0, false, true, "built from the service's own source"},
		{nil, 3, false, true, "3 term(s) had no such frame"},
		{nil, 0, false, false, "only by the list of known libraries"},
		{nil, 0, true, false, "outside the JDK"},
	} {
		if got := appRule(tt.app, "", false, tt.fallback, tt.jvm, tt.module); !strings.Contains(got, tt.want) {
			t.Errorf("appRule(%v, %d, %v, %v) = %q, want %q in it", tt.app, tt.fallback, tt.jvm, tt.module, got, tt.want)
		}
	}
}
