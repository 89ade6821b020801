package queues

import (
	"context"
	"os"
	"runtime/trace"
	"testing"
)

// TestLabShort runs the reduced lab: every case at one client count with
// one-second windows. It checks the model's shape (the fix moves the
// bottleneck to the resource the case saturates) and logs the errors; the
// accuracy bound is the lab's own check, run on a quiet host.
func TestLabShort(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a runtime trace is already running (go test -trace?): the lab records its own")
	}
	cfg := ShortConfig
	cfg.Clients = []int{8}
	if os.Getenv("QUEUES_FULL") != "" {
		cfg = DefaultConfig
	}
	rep, err := Execute(context.Background(), cfg, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Runs {
		c := caseNamed(r.Case)
		if r.Predicted.Bottleneck != c.Saturates {
			t.Errorf("%s N=%d: predicted bottleneck %q, want %q", r.Case, r.Clients, r.Predicted.Bottleneck, c.Saturates)
		}
		if r.Before.Requests == 0 || r.After.Requests == 0 {
			t.Errorf("%s N=%d: no requests measured", r.Case, r.Clients)
		}
	}
}

func caseNamed(name string) Case {
	for _, c := range Cases {
		if c.Name == name {
			return c
		}
	}
	return Case{}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
