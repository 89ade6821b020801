package budget_test

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
)

// TestRunnableBeforeInsideRequest: a top-level task begun by a goroutine
// that is already inside a request (an outbound call's task begun with
// context.Background, say) did not arrive from the network; the runnable
// time before it is the outer request's, not a wait before the inner one.
// Only the outer request is measured: its goroutine was runnable 1 ms
// after the network woke it.
func TestRunnableBeforeInsideRequest(t *testing.T) {
	s := newStream(t)
	const g1 tracein.GoID = 1
	read := s.stack("internal/poll.(*FD).Read", "net/http.(*conn).serve")
	s.status(0, g1, tracein.Waiting, read, "network")
	s.unblock(10, g1, tracein.NoGoroutine)
	s.start(11, g1)
	s.begin(12, g1, 1, "outer")
	s.preempt(13, g1)
	s.start(16, g1) // 3 ms runnable inside the outer request
	s.begin(17, g1, 2, "inner")
	s.end(18, g1, 2, "inner")
	s.end(19, g1, 1, "outer")
	res := s.analyze(budget.Options{})
	for _, g := range res.Groups {
		switch g.Name {
		case "outer":
			if b := g.RunnableBefore; b == nil || b.Requests != 1 || b.Mean != float64(msec) {
				t.Errorf("outer: RunnableBefore %+v, want 1 request, 1 ms", b)
			}
		case "inner":
			if g.RunnableBefore != nil {
				t.Errorf("inner: RunnableBefore %+v, want none (begun inside outer)", *g.RunnableBefore)
			}
		}
	}
	var said []string
	for _, w := range res.Warnings {
		if f, ok := w.(*budget.Finding); ok && f.Kind == budget.FindTransport {
			said = append(said, f.Text)
		}
	}
	// outer: 1 ms of a 7 ms mean, a mean over its requests
	if len(said) != 1 || !strings.HasPrefix(said[0], "outer: before each request began, its goroutine waited 1.000 ms on average for a CPU") {
		t.Errorf("outside-request findings %q, want outer's alone, its wait said as a mean", said)
	}
	if len(res.Groups) != 2 {
		t.Errorf("%d groups, want outer and inner", len(res.Groups))
	}
}
