// Package jfrtest records the JVM workload of packages jfr's and jvm's tests,
// internal/jfr/testdata/Probe.java, under JDK Flight Recorder: it compiles the
// program, runs it with a recording from the JVM's start, and optionally
// starts a second recording after warm-up with jcmd, the way docs/jfr.md
// tells users to.
package jfrtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrNoJDK is wrapped by Record's error when javac, java or jcmd is missing.
var ErrNoJDK = errors.New("no JDK: javac, java and jcmd are needed (Debian: apt-get install openjdk-17-jdk-headless)")

// Options say what to record.
type Options struct {
	Dir string // where to compile and record; must exist
	// Warmup is how long Probe runs before it says it is ready.
	Warmup time.Duration
	// After, when positive, starts a second recording after warm-up with
	// `jcmd PID JFR.start settings=profile settings=latscope.jfc
	// duration=After`, and stops Probe once it is written.
	After time.Duration
	// Overrides are -XX:StartFlightRecording options for the recording
	// from the JVM's start, after settings=profile.
	Overrides []string
}

// DefaultOverrides set 1 ms thresholds for the four waits Probe makes,
// leaving profile's 10 ms for the rest (jdk.SocketWrite, ...).
var DefaultOverrides = []string{"jdk.SocketRead#threshold=1ms", "jdk.JavaMonitorEnter#threshold=1ms", "jdk.ThreadPark#threshold=1ms", "jdk.ThreadSleep#threshold=1ms"}

// Run is a finished run of Probe.
type Run struct {
	FromStart   string // recorded with -XX:StartFlightRecording, from the JVM's start to its exit
	AfterWarmup string // recorded with jcmd after warm-up; "" unless Options.After > 0
	Results     string // Probe's requests as `latscope load` JSON lines
	JVMStarted  time.Time
}

// Source returns the directory of package jfr (Probe.java is in its
// testdata, latscope.jfc at its top).
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// Settings returns the path of internal/jfr/latscope.jfc.
func Settings() string { return filepath.Join(Source(), "latscope.jfc") }

// Record compiles and runs Probe as o says.
func Record(ctx context.Context, o Options) (*Run, error) {
	javac, err := jdkTool("javac")
	if err != nil {
		return nil, err
	}
	java, err := jdkTool("java")
	if err != nil {
		return nil, err
	}
	classes := filepath.Join(o.Dir, "classes")
	if out, err := exec.CommandContext(ctx, javac, "-d", classes, filepath.Join(Source(), "testdata", "Probe.java")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac Probe.java: %w: %s", err, out)
	}
	r := &Run{FromStart: filepath.Join(o.Dir, "start.jfr"), Results: filepath.Join(o.Dir, "results.jsonl")}
	rec := append([]string{"filename=" + r.FromStart, "settings=profile"}, o.Overrides...)
	cmd := exec.CommandContext(ctx, java, "-cp", classes, "-XX:StartFlightRecording:"+strings.Join(rec, ","),
		"Probe", r.Results, strconv.FormatInt(o.Warmup.Milliseconds(), 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.JVMStarted = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("java Probe: %w", err)
	}
	runErr := drive(ctx, o, r, cmd.Process.Pid, stdout)
	stdin.Close()
	if runErr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if runErr != nil {
		return nil, fmt.Errorf("%w (java stderr: %s)", runErr, tail(stderr.String()))
	}
	if werr != nil {
		return nil, fmt.Errorf("java Probe: %w: %s", werr, tail(stderr.String()))
	}
	return r, nil
}

// drive waits for Probe to be ready and makes the jcmd recording.
func drive(ctx context.Context, o Options, r *Run, pid int, stdout io.Reader) error {
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		ready <- fmt.Errorf("Probe ended before it was ready: %v", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			return err
		}
	case <-time.After(o.Warmup + 30*time.Second):
		return errors.New("Probe was not ready in time")
	case <-ctx.Done():
		return ctx.Err()
	}
	if o.After <= 0 {
		return nil
	}
	jcmd, err := jdkTool("jcmd")
	if err != nil {
		return err
	}
	r.AfterWarmup = filepath.Join(o.Dir, "after.jfr")
	args := []string{strconv.Itoa(pid), "JFR.start", "name=latscope", "settings=profile", "settings=" + Settings(),
		"duration=" + strconv.FormatInt(o.After.Milliseconds(), 10) + "ms", "filename=" + r.AfterWarmup}
	if out, err := exec.CommandContext(ctx, jcmd, args...).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("Started recording")) {
		return fmt.Errorf("jcmd %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return waitWritten(ctx, r.AfterWarmup, o.After+30*time.Second)
}

// waitWritten waits until path holds a complete recording: JFR writes it
// when the recording's duration ends.
func waitWritten(ctx context.Context, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if complete(path) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s was not written within %v", path, limit)
}

// complete reports whether path's chunks are all whole and final.
func complete(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for off := 0; off < len(b); {
		if len(b)-off < 68 || string(b[off:off+4]) != "FLR\x00" || b[off+64] == 0xff {
			return false
		}
		size := int(binary.BigEndian.Uint64(b[off+8:]))
		if size < 68 || size > len(b)-off {
			return false
		}
		off += size
	}
	return len(b) > 0
}

// jdkTool finds a JDK command on PATH or in $JAVA_HOME/bin.
func jdkTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		if p := filepath.Join(home, "bin", name); isExec(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: %w", name, ErrNoJDK)
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
