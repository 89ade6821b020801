package jfr

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTool writes an executable shell script standing in for jfr.
func fakeTool(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jfr")
	// A child process writes it: a file this process held open for writing
	// is inherited by any child another parallel test forks meanwhile, and
	// exec of the file then fails with "text file busy" (ETXTBSY) until
	// that child execs.
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", p)
	cmd.Stdin = strings.NewReader("#!/bin/sh\n" + script + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s: %v: %s", p, err, out)
	}
	return p
}

func TestFindTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("JAVA_HOME", "")
	if _, err := FindTool(); !errors.Is(err, ErrNoJDK) || !strings.Contains(err.Error(), "openjdk-17-jdk-headless") {
		t.Errorf("no JDK: FindTool() error %v", err)
	}
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, "bin"), 0o755)
	os.WriteFile(filepath.Join(home, "bin", "jfr"), []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("JAVA_HOME", home)
	if p, err := FindTool(); err != nil || p != filepath.Join(home, "bin", "jfr") {
		t.Errorf("JAVA_HOME: FindTool() = %q, %v", p, err)
	}
}

func TestPrint(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	tests := []struct {
		name   string
		script string
		fn     func(n int) error
		want   string // error substring; "" for success
		events int
	}{
		{"streams", `[ "$1 $2 $3 $4 $5" = "print --json --stack-depth 1024 --events" ] || exit 3; cat ` + abs, nil, "", 18},
		{"jfr fails", `echo "jfr print: could not read recording at x.jfr. Not a valid Flight Recorder file." >&2; exit 1`, nil, "exit status 1: jfr print: could not read recording", 0},
		{"jfr dies midway", `head -c 30000 ` + abs + `; echo "java.lang.OutOfMemoryError" >&2; exit 1`, nil, "OutOfMemoryError", 0},
		{"bad output", `echo '{"recording": {"events": [{"type": 1}]}}'`, nil, "event 0", 0},
		{"callback stops it", `while :; do cat ` + abs + `; done`, func(n int) error {
			if n == 3 {
				return stop
			}
			return nil
		}, "enough", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			err := Print(context.Background(), "x.jfr", PrintOptions{Tool: fakeTool(t, tt.script), StackDepth: DefaultStackDepth, Events: []string{"jdk.SocketRead"}}, func(ev *Event) error {
				n++
				if tt.fn != nil {
					return tt.fn(n)
				}
				return nil
			})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Print: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Print error %v, want one containing %q", err, tt.want)
			case tt.events > 0 && n != tt.events:
				t.Errorf("%d events, want %d", n, tt.events)
			}
		})
	}
}

func TestReadEventsSource(t *testing.T) {
	abs, err := filepath.Abs("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "synth.jfr")
	if err := os.WriteFile(rec, synthChunk{compressed: true}.build(), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := fakeTool(t, "cat "+abs)
	tests := []struct {
		env    string
		events int
		want   string // error substring
	}{
		{"", len(synthWant(DefaultStackDepth)), ""},
		{"binary", len(synthWant(DefaultStackDepth)), ""},
		{"print", 18, ""}, // the fake jfr prints testdata/print.json
		{"json", 0, "LATSCOPE_JFR_READER=\"json\": want binary or print"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(ReaderEnv, tt.env)
			n := 0
			err := ReadEvents(context.Background(), rec, PrintOptions{Tool: tool, StackDepth: DefaultStackDepth, Events: synthTypes}, func(*Event) error {
				n++
				return nil
			})
			switch {
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case n != tt.events:
				t.Errorf("%d events, want %d", n, tt.events)
			}
		})
	}
}
