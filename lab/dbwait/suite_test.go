package dbwait

import (
	"context"
	"errors"
	"flag"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
)

// proxyMain is `latscope-lab proxy --to ADDR --delay D --log FILE --addr-file
// F` for the test binary.
func proxyMain(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	to := fs.String("to", "", "")
	delay := fs.Duration("delay", 0, "")
	logFile := fs.String("log", "", "")
	addrFile := fs.String("addr-file", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := tcpproxy.Options{To: *to, Delay: *delay}
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			return err
		}
		w, err := tcpproxy.NewLogWriter(f, tcpproxy.LogHeader{To: *to, Delay: *delay})
		if err != nil {
			f.Close()
			return err
		}
		opts.Log = w.Log
		defer func() { err = errors.Join(err, w.Flush(), f.Close()) }()
	}
	p, err := tcpproxy.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := os.WriteFile(*addrFile, []byte(p.Addr()+"\n"), 0o644); err != nil {
		return err
	}
	<-ctx.Done()
	p.Close() // every chunk logged before the log is written out
	return nil
}

// TestFaultSuite runs the fault suite on a host with a CPU burner of the
// test's own on every core, and asserts the acceptance per condition,
// judged with the database host's recording (--dbhost) and without it:
// ≥ 95 % of the statements a fault affected get the right verdict, ≤ 1 %
// of those it did not get a wrong outside verdict. The truth is the lab's
// record of what it injected and the database's own logged durations,
// never dbwait's verdicts. The quiet half is judged on a kept run instead,
// deterministically (TestKeptFaultRuns). Every check fails the test.
func TestFaultSuite(t *testing.T) {
	tier.Timing(t)
	needLab(t)
	t.Run("loaded", func(t *testing.T) {
		out, _ := runFaultSuite(t, true)
		for _, c := range out.Checks {
			if c.OK {
				t.Logf("pass: %s: %s", c.Name, c.Got)
			} else {
				t.Errorf("check failed: %s: got %s, want %s", c.Name, c.Got, c.Want)
			}
		}
	})
}

// runFaultSuite runs the fault suite with the short profile, beside a CPU
// burner on every core when loaded, and checks that it made a check per
// condition with and without --dbhost.
func runFaultSuite(t *testing.T, loaded bool) (*lab.Outcome, *lab.Env) {
	env := testEnv(t, lab.Short)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if loaded {
		b, err := lab.StartBurners(ctx, runtime.NumCPU(), env.Command)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop()
		env.Burners = runtime.NumCPU()
	}
	out, err := RunFaults(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.Markdown)
	if n := len(out.Checks); n != 2*len(FaultConditions) {
		t.Errorf("%d checks, want two per condition, with and without --dbhost (%d)", n, 2*len(FaultConditions))
	}
	return out, env
}

func TestBinomTail(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		p    float64
		want float64
	}{
		{10, 0, 0.5, 1},
		{10, 10, 0.5, 1.0 / 1024},
		{10, 9, 0.5, 11.0 / 1024},
		{68, 1, 0.05, 1 - 0.0303}, // 1 − 0.95^68
		{1, 1, 0.05, 0.05},
	} {
		if got := binomTail(tc.n, tc.k, tc.p); got < tc.want-5e-4 || got > tc.want+5e-4 {
			t.Errorf("binomTail(%d, %d, %g) = %.5f, want %.5f", tc.n, tc.k, tc.p, got, tc.want)
		}
	}
	// a sample at the bar passes; one far under it fails
	if _, ok := rate(4, 68, 0.05); !ok {
		t.Error("4 misses of 68 at a 5 % bar: want pass (p ≈ 0.44)")
	}
	if _, ok := rate(12, 68, 0.05); ok {
		t.Error("12 misses of 68 at a 5 % bar: want fail")
	}
	if _, ok := rate(3, 4, 0.05); ok {
		t.Error("3 misses of 4 at a 5 % bar: want fail")
	}
}
