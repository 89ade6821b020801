package render

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// manyResult is a synthetic analysis of one trace: one request type with
// the given latencies (ns), whose critical time is all in the terms given,
// in the order of the trace's term table.
func manyResult(start time.Time, dur time.Duration, name string, lat []int64, terms []budget.Term, crit []int64) (*budget.Result, *Report) {
	g := &budget.Group{Name: name, Count: len(lat), Latencies: lat}
	for i, c := range crit {
		g.Terms = append(g.Terms, budget.TermStat{Term: 0, Wait: c, Critical: c, Fix: c, Requests: len(lat)})
		g.Terms[i].Term = budgetTermID(i)
	}
	res := &budget.Result{Terms: terms, Groups: []*budget.Group{g}}
	res.Info.StartWall = start
	res.Info.End = res.Info.Start + budgetTime(dur)
	return res, &Report{Trace: Trace{Duration: Duration(dur)}, Findings: []Finding{{Kind: "warm-up", Text: "x"}}}
}

var (
	sleep = budget.Term{Frame: "main.handler", Path: []string{"main.serve", "main.handler"}, Mechanism: "time.Sleep", Kind: frame.Sleep}
	query = budget.Term{Frame: "main.query", Path: []string{"main.serve", "main.query"}, Mechanism: "net.(*netFD).Read", Kind: frame.Network}
)

// TestManyBuilder: terms merge by call path, mechanism and kind whatever
// their place in each trace's table; per instance the numbers are the
// instance's own; exact percentiles up to MaxExact, then estimates.
func TestManyBuilder(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		maxExact  int
		estimated bool
	}{
		{"exact", 0, false},
		{"exact at the bound", 6, false},
		{"estimated past it", 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewManyBuilder(ManyOptions{MaxExact: tt.maxExact})
			// web-a: sleep first in its table; web-b: query first.
			res, rep := manyResult(t0, time.Second, "GET /x", []int64{2e6, 2e6, 4e6}, []budget.Term{sleep, query}, []int64{5e6, 3e6})
			b.Add(TraceSource{File: "a.trace", Instance: "web-a", FromLog: true}, res, rep)
			res, rep = manyResult(t0.Add(2*time.Second), time.Second, "GET /x", []int64{10e6, 12e6, 14e6}, []budget.Term{query, sleep}, []int64{30e6, 6e6})
			b.Add(TraceSource{File: "b.trace", Instance: "web-b", FromLog: true}, res, rep)
			m, err := b.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Groups) != 1 || len(m.Groups[0].Terms) != 2 {
				t.Fatalf("%d groups, want 1 with 2 merged terms: %+v", len(m.Groups), m.Groups)
			}
			g := m.Groups[0]
			q := g.Requests
			if q.Count != 6 || q.Mean.Std() != 7333333*time.Nanosecond || q.Min.Std() != 2*time.Millisecond || q.Max.Std() != 14*time.Millisecond || q.Estimated != tt.estimated {
				t.Errorf("requests %+v", q)
			}
			if !tt.estimated && (q.P50.Std() != 4*time.Millisecond || q.P99.Std() != 14*time.Millisecond) {
				t.Errorf("exact p50 %v p99 %v, want 4ms 14ms", q.P50.Std(), q.P99.Std())
			}
			// query: (3+30)/6 ms per request; sleep: (5+6)/6.
			if g.Terms[0].Frame != "main.query" || g.Terms[0].Critical != durOf(33e6/6.0) || g.Terms[1].Critical != durOf(11e6/6.0) {
				t.Errorf("terms %+v", g.Terms)
			}
			a, bb := g.Instances[0], g.Instances[1]
			if a.Instance != "web-a" || a.Requests != 3 || a.Mean != durOf(8e6/3.0) || a.TopTerm != "main.handler" || a.TopCritical != durOf(5e6/3.0) {
				t.Errorf("web-a row %+v", a)
			}
			if bb.Instance != "web-b" || bb.Mean != Duration(12e6) || bb.TopTerm != "main.query" || bb.TopCritical != Duration(10e6) {
				t.Errorf("web-b row %+v", bb)
			}
			if !tt.estimated && (a.P99 != Duration(4e6) || bb.P99 != Duration(14e6)) {
				t.Errorf("p99 per instance %v %v, want 4ms 14ms", a.P99.Std(), bb.P99.Std())
			}
			if got := len(m.Findings); got != map[bool]int{false: 0, true: 1}[tt.estimated] {
				t.Errorf("findings %v", m.Findings)
			}
			if len(m.Traces) != 2 || len(m.Traces[1].Findings) != 1 {
				t.Errorf("traces %+v, want both with their own finding", m.Traces)
			}
		})
	}
}

// TestManyBuilderNotes: instances named by file, overlapping windows of
// one instance, and a --task that matches nothing.
func TestManyBuilderNotes(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	b := NewManyBuilder(ManyOptions{})
	for i, start := range []time.Time{t0, t0.Add(4 * time.Second), t0.Add(20 * time.Second)} {
		res, rep := manyResult(start, 10*time.Second, "GET /x", []int64{1e6}, nil, nil)
		b.Add(TraceSource{File: []string{"s1.trace", "s2.trace", "s3.trace"}[i], Instance: "web-a"}, res, rep)
	}
	m, err := b.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range m.Findings {
		kinds = append(kinds, f.Kind)
	}
	if strings.Join(kinds, " ") != "instance-from-file windows-overlap" || !strings.Contains(m.Findings[1].Text, "s1.trace and s2.trace overlap by 6.00 s") {
		t.Errorf("findings %v", m.Findings)
	}
	if g := m.Groups[0]; len(g.Instances) != 1 || g.Instances[0].Traces != 3 || g.Instances[0].TopTerm != "" {
		t.Errorf("instances %+v, want web-a of 3 traces, no term", g.Instances)
	}
	b = NewManyBuilder(ManyOptions{Task: "GET /y"})
	res, rep := manyResult(t0, time.Second, "GET /x", []int64{1e6}, nil, nil)
	b.Add(TraceSource{File: "s1.trace", Instance: "web-a"}, res, rep)
	if _, err := b.Finalize(); !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), "(request types: GET /x); closest: GET /x") {
		t.Errorf("Task GET /y: %v", err)
	}
}

func budgetTermID(i int) critpath.TermID { return critpath.TermID(i) }

func budgetTime(d time.Duration) tracein.Time { return tracein.Time(d) }
