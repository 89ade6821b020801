package queues

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"testing"

	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
)

// serveEnv makes the test binary act as `latscope-lab queues-serve` (or
// `lab burn`), so the lab can start its services as processes of their own.
const serveEnv = "LATSCOPE_QUEUES_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		args := os.Args[1:]
		var err error
		switch {
		case len(args) == 1 && args[0] == "burn":
			lab.Burn(ctx)
		case len(args) >= 1 && args[0] == "queues-serve":
			err = ServeMain(ctx, os.Stdout, os.Stderr, args[1:])
		default:
			err = fmt.Errorf("want queues-serve ... or burn, got %q", args)
		}
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testCommand runs this test binary as latscope.
func testCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	return cmd
}

// TestLabShort runs the reduced lab: every case at one client count with
// one-second windows. It checks the model's shape (the fix moves the
// bottleneck to the resource the case saturates) and logs the errors; the
// accuracy bound is the lab's own check, run on a quiet host.
func TestLabShort(t *testing.T) {
	tier.Timing(t)
	cfg := ShortConfig
	cfg.Clients = []int{8}
	if os.Getenv("QUEUES_FULL") != "" {
		cfg = DefaultConfig
	}
	cfg.Command = testCommand
	if os.Getenv("QUEUES_LOADED") != "" {
		cfg.Burners = runtime.NumCPU()
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
