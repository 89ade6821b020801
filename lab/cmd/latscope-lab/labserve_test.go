package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab/upstream"
)

// labServeOutput hands each write of the serving goroutine to the test over a
// channel, so the test can wait for the listening line.
type labServeOutput struct {
	ch chan string
}

func (b labServeOutput) Write(p []byte) (int, error) {
	b.ch <- string(p)
	return len(p), nil
}

// TestLabServe runs the service in-process as `latscope-lab serve` would,
// finds it through --addr-file, exercises its endpoints and cancels it.
func TestLabServe(t *testing.T) {
	tier.Timing(t)
	pg := pgtest.Start(t)
	up, err := upstream.Start(t.Context(), upstream.Options{Delay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(t.Context())
	stdout := labServeOutput{ch: make(chan string, 16)}
	done := make(chan error, 1)
	go func() {
		done <- runLabServe(ctx, stdout, io.Discard, []string{
			"--mode", "concurrent", "--upstream", up.URL(), "--db-url", pg.URL(),
			"--pool", "3", "--cpu-iters", "500", "--addr-file", addrFile,
		})
	}()
	addr := waitLabServeAddr(t, addrFile, done)
	select {
	case line := <-stdout.ch:
		want := "listening on http://" + addr + " mode=concurrent cpu_iters=500\n"
		if line != want {
			t.Errorf("stdout %q, want %q", line, want)
		}
	case <-time.After(5 * time.Second):
		t.Error("no listening line on stdout")
	}
	base := "http://" + addr
	checks := []struct{ path, want string }{
		{"/work", "ok\n"},
		{"/healthz", "ok\n"},
		{"/metrics", "process_cpu_seconds_total "},
		{"/metrics", `latscope_demo_requests_total{code="200",mode="concurrent"} 1`},
		{"/debug/pprof/", "goroutine"},
	}
	for _, c := range checks {
		code, body := labServeGet(t, base+c.path)
		if code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, body lacks %q:\n%.300s", c.path, code, c.want, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runLabServe after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("runLabServe did not return after its context was cancelled")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}

// waitLabServeAddr waits for the address file, failing early if the command ends.
func waitLabServeAddr(t *testing.T, path string, done <-chan error) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			addr := strings.TrimSpace(string(b))
			if !strings.HasPrefix(addr, "127.0.0.1:") || !strings.HasSuffix(string(b), "\n") {
				t.Fatalf("--addr-file holds %q, want one line 127.0.0.1:PORT", b)
			}
			return addr
		}
		select {
		case err := <-done:
			t.Fatalf("runLabServe ended before listening: %v", err)
		case <-deadline:
			t.Fatal("no --addr-file after 30s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func labServeGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// TestLabServeFlags checks that every bad invocation fails with an error
// naming the flag, and an unreachable database with one naming it.
func TestLabServeFlags(t *testing.T) {
	ok := []string{"--upstream", "http://127.0.0.1:1/", "--db-url", "postgres://x@127.0.0.1:1/x"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no upstream", []string{"--db-url", "postgres://x@127.0.0.1:1/x"}, "--upstream"},
		{"upstream not a URL", []string{"--upstream", "127.0.0.1:8080", "--db-url", "x"}, "--upstream"},
		{"no db", []string{"--upstream", "http://127.0.0.1:1/"}, "--db-url"},
		{"bad mode", append([]string{"--mode", "parallel"}, ok...), "-mode"},
		{"bad pool", append([]string{"--pool", "0"}, ok...), "--pool"},
		{"pool not a number", append([]string{"--pool", "ten"}, ok...), "-pool"},
		{"bad cpu-iters", append([]string{"--cpu-iters", "-5"}, ok...), "--cpu-iters"},
		{"unknown flag", append([]string{"--bogus"}, ok...), "-bogus"},
		{"extra argument", append(ok, "extra"), `"extra"`},
		{"database down", append([]string{"--cpu-iters", "1"}, ok...), "database connection 1 of 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			err := runLabServe(t.Context(), io.Discard, &stderr, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("runLabServe(%q) = %v, want an error naming %s", tt.args, err, tt.want)
			}
		})
	}
}

func TestLabServeUsage(t *testing.T) {
	err := runLabServe(t.Context(), io.Discard, io.Discard, []string{"-h"})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h returned %v, want flag.ErrHelp", err)
	}
	var help strings.Builder
	if err := cli.Run(t.Context(), &help, io.Discard, []string{"serve", "-h"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--upstream URL --db-url URL", "-addr-file FILE", "-mode MODE", "examples:"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
}

func TestWriteAddrFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "addr")
	for _, data := range []string{"127.0.0.1:1\n", "127.0.0.1:2\n"} {
		if err := writeAddrFile(path, data); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != data {
			t.Errorf("read back %q, %v; want %q", b, err, data)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
	if err := writeAddrFile(filepath.Join(path, "x", "y"), "z"); err == nil {
		t.Error("writing beneath a file succeeded")
	}
}
