// Package churntest records the JVM workload of the scheduler-churn tests,
// internal/jfr/testdata/Burst.java, under JDK Flight Recorder: it compiles the
// program once and runs it in a mode (a ForkJoinPool woken in bursts of
// tiny tasks, or the same work batched) with a recording from the JVM's
// start, using settings=profile and churn.jfc, as docs/jfr-churn.md tells
// users to.
package churntest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrNoJDK is wrapped by the errors of Compile and Record when javac or
// java is missing.
var ErrNoJDK = errors.New("no JDK: javac and java are needed (Debian: apt-get install openjdk-17-jdk-headless)")

// Options say what Burst does. A zero field takes DefaultOptions' value.
type Options struct {
	Mode        string        // "burst" (a task per event) or "batch" (a task per burst)
	Length      time.Duration // how long Burst runs
	Every       time.Duration // interval between bursts
	Batch       int           // events per burst
	Work        int           // rounds of arithmetic per event
	Parallelism int           // the pool's width
}

// DefaultOptions are those of the tests: 256 events of a few hundred
// nanoseconds each, every millisecond, for a 32-worker pool (the width of
// the seed case, docs/method.md §10).
var DefaultOptions = Options{Mode: "burst", Length: 4 * time.Second, Every: time.Millisecond, Batch: 256, Work: 300, Parallelism: 32}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Mode == "" {
		o.Mode = d.Mode
	}
	if o.Length <= 0 {
		o.Length = d.Length
	}
	if o.Every <= 0 {
		o.Every = d.Every
	}
	if o.Batch <= 0 {
		o.Batch = d.Batch
	}
	if o.Work <= 0 {
		o.Work = d.Work
	}
	if o.Parallelism <= 0 {
		o.Parallelism = d.Parallelism
	}
	return o
}

// Run is a finished run of Burst.
type Run struct {
	Recording string        // the recording, from the JVM's start to its exit
	Events    int64         // events Burst handled
	CPU       time.Duration // the process's CPU over the run, as Burst measured it (getProcessCpuTime)
	Wall      time.Duration // the run's length, as Burst measured it
}

// CPUPerEvent returns the process's CPU per event handled.
func (r *Run) CPUPerEvent() time.Duration {
	if r.Events == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Events)
}

// Source returns the directory of package jfr (Burst.java is in its
// testdata).
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// Settings returns the path of churn.jfc.
func Settings() string { return filepath.Join(Source(), "churntest", "churn.jfc") }

// Compile compiles Burst.java into dir/classes and returns that directory.
func Compile(ctx context.Context, dir string) (string, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", fmt.Errorf("javac: %w", ErrNoJDK)
	}
	classes := filepath.Join(dir, "classes")
	if out, err := exec.CommandContext(ctx, javac, "-d", classes, filepath.Join(Source(), "testdata", "Burst.java")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac Burst.java: %w: %s", err, out)
	}
	return classes, nil
}

// Record runs Burst from classes (Compile's) as o says, recording into
// dir/NAME.jfr.
func Record(ctx context.Context, classes, dir, name string, o Options) (*Run, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java: %w", ErrNoJDK)
	}
	o = o.withDefaults()
	r := &Run{Recording: filepath.Join(dir, name+".jfr")}
	rec := "-XX:StartFlightRecording:filename=" + r.Recording + ",settings=profile,settings=" + Settings()
	args := []string{"-cp", classes, rec, "Burst", o.Mode, ms(o.Length), strconv.FormatInt(o.Every.Microseconds(), 10),
		strconv.Itoa(o.Batch), strconv.Itoa(o.Work), strconv.Itoa(o.Parallelism)}
	cmd := exec.CommandContext(ctx, java, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("java Burst %s: %w: %s", o.Mode, err, strings.TrimSpace(stderr.String()))
	}
	if err := r.parse(stdout.String()); err != nil {
		return nil, fmt.Errorf("java Burst %s: %w", o.Mode, err)
	}
	return r, nil
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// parse reads Burst's last line: "events=N cpu_ns=C wall_ns=W".
func (r *Run) parse(out string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	var cpu, wall int64
	if _, err := fmt.Sscanf(last, "events=%d cpu_ns=%d wall_ns=%d", &r.Events, &cpu, &wall); err != nil {
		return fmt.Errorf("its last line %q: %w", last, err)
	}
	r.CPU, r.Wall = time.Duration(cpu), time.Duration(wall)
	return nil
}
