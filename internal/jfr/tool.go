package jfr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoJDK is returned when the JDK's jfr tool cannot be found.
var ErrNoJDK = errors.New("the JDK's jfr tool is neither on PATH nor in $JAVA_HOME/bin: install a JDK 11 or later (Debian: apt-get install openjdk-17-jdk-headless)")

// FindTool returns the path of the JDK's jfr command: jfr on PATH, else
// $JAVA_HOME/bin/jfr.
func FindTool() (string, error) {
	if p, err := exec.LookPath("jfr"); err == nil {
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "jfr")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNoJDK
}

// PrintOptions say which events to read and how deep their stacks go, for
// both event sources: `jfr print` (Print) and the binary reader
// (ReadBinary), which reads them as `jfr print` prints them.
type PrintOptions struct {
	Tool string // path of the jfr command; "" finds it with FindTool (Print only)
	// StackDepth is passed as --stack-depth. jfr print's own default is 5
	// frames, which cuts the application frame off most waits.
	StackDepth int
	Events     []string // event types to print (--events); full names
}

// DefaultStackDepth is the --stack-depth latscope prints with: deeper than
// the JVM records (64 frames unless -XX:FlightRecorderOptions:stackdepth
// raises it), so every recorded frame is printed. It costs nothing for
// shallower stacks: the JSON holds only the frames there are.
const DefaultStackDepth = 1024

// maxStderr bounds what is kept of jfr print's standard error.
const maxStderr = 4096

// Print runs `jfr print --json` on the recording path and calls fn with each
// event, streaming its output. ev is reused: fn must copy what it keeps.
// An error from fn stops the command and is returned. It is the reference
// ReadBinary is tested against, and the event source of ReadEvents when
// $LATSCOPE_JFR_READER is "print" (docs/jfr-format.md).
func Print(ctx context.Context, path string, o PrintOptions, fn func(ev *Event) error) error {
	tool := o.Tool
	if tool == "" {
		var err error
		if tool, err = FindTool(); err != nil {
			return err
		}
	}
	args := []string{"print", "--json", "--stack-depth", strconv.Itoa(max(o.StackDepth, 1))}
	if len(o.Events) > 0 {
		args = append(args, "--events", strings.Join(o.Events, ","))
	}
	cmd := exec.CommandContext(ctx, tool, append(args, path)...)
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	// once jfr has exited (or been killed), stop waiting for anything it
	// left holding its output open
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("jfr print: %w", err)
	}
	derr := decodeAll(NewDecoder(out), fn)
	if derr != nil {
		_ = cmd.Process.Kill() // Wait then closes the pipe it may be blocked on
	}
	werr := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case isFromFn(derr):
		return unwrapFn(derr)
	case werr != nil && (derr == nil || errors.As(werr, &exit) && exit.ExitCode() >= 0):
		// jfr failed by itself (not killed by us): its message says why.
		return fmt.Errorf("%s print %s: %w: %s", tool, path, werr, stderr.firstLine())
	}
	return derr
}

// fnError marks an error returned by Print's callback.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

func isFromFn(err error) bool {
	var fe fnError
	return errors.As(err, &fe)
}

func unwrapFn(err error) error {
	var fe fnError
	if errors.As(err, &fe) {
		return fe.err
	}
	return err
}

func decodeAll(d *Decoder, fn func(*Event) error) error {
	var ev Event
	for {
		err := d.Next(&ev)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&ev); err != nil {
			return fnError{err}
		}
	}
}

// capped keeps the first max bytes written to it. The buffer is a field,
// not embedded: an embedded bytes.Buffer's ReadFrom would let io.Copy (as
// os/exec copies a child's standard error) fill it past max.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) firstLine() string {
	s := strings.TrimSpace(c.buf.String())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no message on standard error"
	}
	return s
}
