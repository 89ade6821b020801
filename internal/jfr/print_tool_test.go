package jfr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrintFindsTool: with no tool given, Print runs the jfr it finds on PATH, and fails
// with ErrNoJDK, running nothing, when there is none.
func TestPrintFindsTool(t *testing.T) {
	abs, err := filepath.Abs("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	// a jfr that prints testdata/print.json, as jfr printed it, first on PATH
	tool := fakeTool(t, "cat "+abs)
	t.Setenv("PATH", filepath.Dir(tool)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	t.Setenv("JAVA_HOME", "")
	if p, err := FindTool(); err != nil || p != tool {
		t.Errorf("FindTool() = %q, %v; want %s on PATH", p, err, tool)
	}
	n := 0
	if err := Print(context.Background(), "x.jfr", PrintOptions{StackDepth: 5}, func(*Event) error { n++; return nil }); err != nil || n != 18 {
		t.Errorf("Print with the jfr on PATH: %d events, %v; want print.json's 18", n, err)
	}
	t.Setenv("PATH", t.TempDir())
	err = Print(context.Background(), "x.jfr", PrintOptions{}, func(*Event) error { n++; return nil })
	if !errors.Is(err, ErrNoJDK) {
		t.Errorf("Print without a jfr: %v, want ErrNoJDK", err)
	}
}

// TestPrintFailures: how Print reports a jfr that cannot start, that fails without a word or
// with a stack trace on standard error (its first line is the message), and a context
// cancelled while jfr streams.
func TestPrintFailures(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "bin", "jfr")
	silent := fakeTool(t, "exit 2")
	trace := fakeTool(t, `printf 'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n\tat jdk.jfr.internal.tool.Print.execute(Print.java:164)\n' >&2; exit 1`)
	for _, tt := range []struct {
		tool, want string
	}{
		{missing, "jfr print: fork/exec " + missing + ": no such file or directory"},
		{silent, silent + " print x.jfr: exit status 2: no message on standard error"},
		{trace, trace + ` print x.jfr: exit status 1: Exception in thread "main" java.lang.OutOfMemoryError: Java heap space`},
	} {
		err := Print(context.Background(), "x.jfr", PrintOptions{Tool: tt.tool}, func(*Event) error { return nil })
		if err == nil || err.Error() != tt.want {
			t.Errorf("Print: %v\nwant %s", err, tt.want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err = Print(ctx, "x.jfr", PrintOptions{Tool: fakeTool(t, `while :; do cat `+abs+`; done`)}, func(*Event) error {
		n++
		cancel() // jfr goes on printing: it is killed
		return nil
	})
	if !errors.Is(err, context.Canceled) || n == 0 {
		t.Errorf("cancelled after %d events: %v, want context.Canceled", n, err)
	}
	if err := Print(ctx, "x.jfr", PrintOptions{Tool: silent}, func(*Event) error { return nil }); !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "jfr print: ") {
		t.Errorf("Print with a done context: %v, want it not started", err)
	}
}
