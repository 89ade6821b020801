package burst

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/lab"
)

// childEnv makes the test binary act as `latscope-lab burst-serve`, so the
// scenario's tests run the service as a separate OS process without
// building latscope.
const childEnv = "LATSCOPE_BURST_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func childMain(args []string) int {
	if len(args) < 1 || args[0] != "burst-serve" {
		fmt.Fprintf(os.Stderr, "test child: want burst-serve FLAGS, got %q\n", args)
		return 2
	}
	cfg := DefaultServeConfig
	fs := flag.NewFlagSet("burst-serve", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "test child: %v\n", err)
		return 2
	}
	return 0
}

// testEnv runs burst-serve as this test binary in child mode.
func testEnv(t *testing.T, p lab.Profile) *lab.Env {
	return &lab.Env{
		Out:     t.TempDir(),
		Log:     testLog{t},
		Profile: p,
		Command: func(ctx context.Context, args ...string) *exec.Cmd {
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), childEnv+"=1")
			return cmd
		},
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}

var _ io.Writer = testLog{}

// shortProfile keeps each variant to about five seconds.
var shortProfile = lab.Profile{Name: "test", Warmup: 500 * time.Millisecond, Window: 2 * time.Second, Runs: 1}
