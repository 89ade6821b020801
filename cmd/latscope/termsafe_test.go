package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/cli"
)

// hostile is a task, region and log name a request could bring: it clears
// the screen, sets the window title and forges a report line.
const hostile = "evil\x1b[2J\x1b]0;pwned\x07\r\nrequest: 1 requests, mean 0.01 ms\u2028"

// recordHostile records, with the real runtime tracer, requests whose task
// type, region and log value are hostile.
func recordHostile(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("cannot start the runtime tracer (another trace is running?): %v", err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, task := trace.NewTask(context.Background(), hostile)
			trace.Log(ctx, "route\x1b[31m", hostile)
			trace.WithRegion(ctx, hostile, func() { time.Sleep(time.Duration(1+i%3) * time.Millisecond) })
			task.End()
		}()
	}
	wg.Wait()
	trace.Stop()
	path := filepath.Join(t.TempDir(), "hostile.trace")
	if p := os.Getenv("HOSTILE_OUT"); p != "" {
		path = p
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// controls returns the control characters of s other than newline.
func controls(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029') {
			out = append(out, r)
		}
	}
	return out
}

// TestTextOutputEscapesControls: names from traffic reach the terminal
// escaped, in the report and in errors; JSON keeps them exact.
func TestTextOutputEscapesControls(t *testing.T) {
	path := recordHostile(t)
	for _, args := range [][]string{
		{"analyze", path},
		{"analyze", "--tree", "--predict", "remove=" + "nothing-of-that-name", path},
		{"compare", path, path},
		{"analyze", path, path},
	} {
		stdout, stderr, err := runCLI(t, args...)
		var msg string
		if err != nil {
			var b bytes.Buffer
			cli.PrintError(&b, err, false)
			msg = b.String()
		}
		for _, out := range []string{stdout, stderr, msg} {
			if c := controls(out); len(c) > 0 {
				t.Errorf("latscope %s: control characters %q reach the terminal:\n%s", strings.Join(args[:len(args)-1], " "), c, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "request: 1 requests") {
					t.Errorf("latscope %s: a forged line: %q", args[0], line)
				}
			}
		}
	}
	stdout, _, err := runCLI(t, "analyze", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, `evil\u001b[2J`) {
		t.Errorf("JSON lost the exact task name:\n%.600s", stdout)
	}
}
