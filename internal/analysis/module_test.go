package analysis

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/kept"
	"github.com/latscope/latscope/tracelog"
)

// moduleTrace returns the kept trace NAME (kept.Trace): requests that wait
// under this test's own functions, with a main module logged after delay
// (none when delay < 0).
func moduleTrace(t *testing.T, name, module string, delay time.Duration) []byte {
	t.Helper()
	path := kept.Trace(t, "module-"+name, func(w io.Writer) error {
		if err := trace.Start(w); err != nil {
			return err
		}
		start := time.Now()
		logged := delay < 0
		for i := 0; i < 6 || !logged; i++ {
			if !logged && time.Since(start) >= delay {
				trace.Log(context.Background(), tracelog.Module, module)
				logged = true
			}
			ctx, task := trace.NewTask(context.Background(), "request")
			waitHere(ctx)
			task.End()
		}
		trace.Stop()
		return nil
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

//go:noinline
func waitHere(context.Context) { time.Sleep(20 * time.Millisecond) }

// TestModuleFromTrace: the agent's main-module log decides the application
// even when it comes after the first requests, within the lookahead; one
// after it does not.
func TestModuleFromTrace(t *testing.T) {
	const other = "github.com/acme/other" // not this test's module
	for _, tt := range []struct {
		name, file string
		delay      time.Duration
		opts       func(*budget.Options)
		wantModule string
		fallback   bool // this test's frames are not the module's: its terms fall back
	}{
		{"no log", "none", -1, nil, "", false},
		{"logged after two requests", "late", 50 * time.Millisecond, nil, other, true},
		{"logged after the lookahead", "too-late", tracelog.ModuleLookahead + 200*time.Millisecond, nil, "", false},
		{"--app wins", "at-once", 0, func(o *budget.Options) { o.Rules.App = []string{"github.com/latscope/"} }, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := moduleTrace(t, tt.file, other, tt.delay)
			opts := budget.DefaultOptions
			if tt.opts != nil {
				tt.opts(&opts)
			}
			res, err := Reader(context.Background(), "m.trace", bytes.NewReader(data), opts, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Info.Module != tt.wantModule {
				t.Errorf("module %q, want %q", res.Info.Module, tt.wantModule)
			}
			found := false
			for _, tm := range res.Terms {
				if tm.Frame == "github.com/latscope/latscope/analysis.waitHere" {
					found = true
					if tm.Fallback != tt.fallback {
						t.Errorf("term %s: fallback %v, want %v", tm.Name(), tm.Fallback, tt.fallback)
					}
				}
			}
			if !found {
				t.Errorf("no term under waitHere")
			}
			if len(res.Groups) != 1 || res.Groups[0].Count < 6 {
				t.Errorf("groups %d, first with %d requests", len(res.Groups), res.Groups[0].Count)
			}
		})
	}
}
