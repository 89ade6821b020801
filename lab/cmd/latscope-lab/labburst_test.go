package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab/burst"
)

// TestLabBurstServe runs burst-serve in-process as the lab would start it,
// finds it through --addr-file, reads its counters and a CPU profile, and
// cancels it.
func TestLabBurstServe(t *testing.T) {
	tier.Timing(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout := labServeOutput{ch: make(chan string, 4)}
	done := make(chan error, 1)
	go func() {
		done <- runBurstServe(ctx, stdout, io.Discard, []string{
			"--mode", "fixed", "--procs", "8", "--batch", "200", "--every", "10ms", "--work", "4", "--addr-file", addrFile,
		})
	}()
	addr := waitLabBurstAddr(t, addrFile, done)
	select {
	case line := <-stdout.ch:
		want := "listening on http://" + addr + " mode=fixed gomaxprocs=8 workers=2 batch=200 every=10ms work=4\n"
		if line != want {
			t.Errorf("stdout %q, want %q", line, want)
		}
	case <-time.After(5 * time.Second):
		t.Error("no listening line on stdout")
	}
	// The counters are read once a batch has run (one is due every 10 ms),
	// waited for rather than slept for: on a busy host the first batch may
	// come later than any fixed sleep.
	var st burst.Stats
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st = burst.Stats{}
		if err := json.Unmarshal(labBurstGet(t, "http://"+addr+"/stats"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Batches > 0 || time.Now().After(deadline) {
			break
		}
	}
	if st.Mode != burst.Fixed || st.GOMAXPROCS != 8 || st.Workers != 2 || st.Events == 0 || st.Batches == 0 {
		t.Errorf("stats %+v: want mode fixed, GOMAXPROCS 8, 2 workers, events and batches counted", st)
	}
	p, err := profile.ParseData(labBurstGet(t, "http://"+addr+"/profile?seconds=0.3&hz=200"))
	if err != nil {
		t.Fatalf("/profile: %v", err)
	}
	if p.Period != 5_000_000 {
		t.Errorf("profile period %d ns, want 5000000 (200 Hz)", p.Period)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runBurstServe after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("runBurstServe did not return after its context was cancelled")
	}
}

// TestLabBurstServeFlags checks that bad flags come back as one-line errors
// naming the flag, and -h as flag.ErrHelp.
func TestLabBurstServeFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "bursty"}, `unknown mode "bursty"`},
		{[]string{"--procs", "-1"}, "--procs -1"},
		{[]string{"--batch", "2000000"}, "--batch 2000000"},
		{[]string{"--work", "-3"}, "--work -3"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		err := runBurstServe(t.Context(), io.Discard, io.Discard, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
	if err := runBurstServe(t.Context(), io.Discard, io.Discard, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// TestLabBurstServeArgsRoundTrip checks that the flags the scenario passes
// (ServeConfig.Args) parse back into the same configuration.
func TestLabBurstServeArgsRoundTrip(t *testing.T) {
	want := burst.ServeConfig{Config: burst.Config{Mode: burst.Pool, Procs: 16, Batch: 300, Every: 250 * time.Millisecond, Work: 7, Workers: 5},
		Addr: "127.0.0.1:0", AddrFile: "/tmp/x.addr"}
	got, err := parseBurstServe(io.Discard, want.Args())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("parse(Args()) = %+v, want %+v", got, want)
	}
}

func waitLabBurstAddr(t *testing.T, path string, done <-chan error) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		select {
		case err := <-done:
			t.Fatalf("runBurstServe returned before listening: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no address file within 10 s")
	return ""
}

func labBurstGet(t *testing.T, url string) []byte {
	t.Helper()
	code, body := labServeGet(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d: %.200s", url, code, body)
	}
	return []byte(body)
}
