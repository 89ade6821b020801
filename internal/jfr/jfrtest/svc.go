package jfrtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/java"
)

// SvcOptions say how to record internal/jfr/testdata/Svc.java, the JDK service of
// real shape (an intrinsic-hashed ETag, a connection pool of its own, a
// CPU-bound lock, a wrapped server executor).
type SvcOptions struct {
	Dir     string // where to build and record; must exist
	Name    string // the run's files: NAME.jfr, NAME.jsonl
	Clients int
	Mode    string // "locked" or "fixed"
	// Workers is the HTTP server's threads; 0 keeps Svc's 32.
	Workers int
	// Run is how long the clients run; the recording starts Delay into
	// it (JFR's own delay=, so its start-up lands in a warm service, as a
	// jcmd JFR.start does) and lasts Length.
	Run, Delay, Length time.Duration
	// Nice, when set, runs the JVM under nice -n -15 (as root).
	Nice bool
	// Jcmd starts the recording with jcmd PID JFR.start after Delay, as an
	// operator does, instead of -XX:StartFlightRecording:delay=.
	Jcmd bool
	// Continuous also runs a recording with the same settings, no file,
	// from the JVM's start, as a service that keeps JFR on does: the
	// recorder's start-up (its event classes instrumented, the code that
	// writes them deoptimized and compiled again) then falls in the
	// warm-up, not in the measured recording.
	Continuous bool
}

// DefaultSvc is the kept recordings' timing: 13 s of load, recorded from
// 11 to 13 s, past jvm.WarmupGap after the JVM's start.
var DefaultSvc = SvcOptions{Run: 13 * time.Second, Delay: 11 * time.Second, Length: 2 * time.Second}

// SvcRun is a finished run of Svc.
type SvcRun struct {
	Recording string // the recording
	Results   string // Svc's own timings, one JSON line a request
	Summary   SvcSummary
	Command   string
}

// SvcSummary is the line Svc prints at its end: the clients' completions in
// each second of the run.
type SvcSummary struct {
	Clients   int     `json:"clients"`
	Mode      string  `json:"mode"`
	PerSecond []int64 `json:"per_second"`
	// ClientNs sums the clients' latencies of the requests that completed
	// in each second.
	ClientNs []int64 `json:"client_ns_per_second"`
}

// ClientMean is the clients' mean latency, in ms, of the requests that
// completed in whole seconds [from, to) of the run.
func (s SvcSummary) ClientMean(from, to int) float64 {
	var n, ns int64
	for i := from; i < to && i < len(s.PerSecond) && i < len(s.ClientNs); i++ {
		n += s.PerSecond[i]
		ns += s.ClientNs[i]
	}
	return float64(ns) / float64(max(1, n)) / 1e6
}

// RecordSvc builds the Java library and Svc and records a run of it.
func RecordSvc(ctx context.Context, o SvcOptions) (*SvcRun, error) {
	javaCmd, err := jdkTool("java")
	if err != nil {
		return nil, err
	}
	javac, err := jdkTool("javac")
	if err != nil {
		return nil, err
	}
	classes, err := java.Build(ctx, java.BuildOptions{Dir: o.Dir, Javac: javac})
	if err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, javac, "-nowarn", "-cp", classes, "-d", classes, filepath.Join(Source(), "testdata", "Svc.java")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac Svc.java: %w: %s", err, out)
	}
	r := &SvcRun{Recording: filepath.Join(o.Dir, o.Name+".jfr"), Results: filepath.Join(o.Dir, o.Name+".jsonl")}
	jfc := filepath.Join(Source(), "latscope.jfc")
	rec := fmt.Sprintf("delay=%dms,duration=%dms,settings=profile,settings=%s,filename=%s",
		o.Delay.Milliseconds(), o.Length.Milliseconds(), jfc, r.Recording)
	args := []string{"-XX:+UseSerialGC", "-cp", classes, "-XX:StartFlightRecording:" + rec, "Svc", r.Results, strconv.Itoa(o.Clients), strconv.FormatFloat(o.Run.Seconds(), 'f', -1, 64), o.Mode}
	workers := ""
	if o.Workers > 0 {
		workers = " " + strconv.Itoa(o.Workers)
		args = append(args, strconv.Itoa(o.Workers))
	}
	if o.Jcmd {
		args = slices.Delete(args, 3, 4)
	}
	if o.Continuous {
		args = slices.Insert(args, 3, fmt.Sprintf("-XX:StartFlightRecording:name=continuous,settings=profile,settings=%s", jfc))
	}
	name := javaCmd
	if o.Nice {
		args = append([]string{"-n", "-15", javaCmd}, args...)
		name = "nice"
	}
	var buf strings.Builder
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("java Svc: %w", err)
	}
	var jerr error
	if o.Jcmd {
		jcmd, err := jdkTool("jcmd")
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, err
		}
		time.Sleep(o.Delay)
		// nice execs java: the pid is the JVM's
		out, err := exec.CommandContext(ctx, jcmd, strconv.Itoa(cmd.Process.Pid), "JFR.start", "name=latscope", "settings=profile", "settings="+jfc,
			fmt.Sprintf("duration=%dms", o.Length.Milliseconds()), "filename="+r.Recording).CombinedOutput()
		if err != nil {
			jerr = fmt.Errorf("jcmd JFR.start: %w: %s", err, out)
		}
	}
	err = cmd.Wait()
	out := buf.String()
	if err != nil {
		return nil, fmt.Errorf("java Svc: %w: %s", err, tail(out))
	}
	if jerr != nil {
		return nil, jerr
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			if err := json.Unmarshal([]byte(l), &r.Summary); err != nil {
				return nil, fmt.Errorf("Svc's summary %q: %w", l, err)
			}
		}
	}
	if r.Summary.Clients == 0 {
		return nil, fmt.Errorf("java Svc printed no summary: %s", tail(out))
	}
	if o.Jcmd {
		r.Command = fmt.Sprintf("java -XX:+UseSerialGC -cp LIB Svc %s.jsonl %d %g %s%s & sleep %g; jcmd PID JFR.start name=latscope settings=profile settings=internal/jfr/latscope.jfc duration=%dms filename=%s.jfr",
			o.Name, o.Clients, o.Run.Seconds(), o.Mode, workers, o.Delay.Seconds(), o.Length.Milliseconds(), o.Name)
		return r, nil
	}
	r.Command = fmt.Sprintf("java -XX:+UseSerialGC -cp LIB -XX:StartFlightRecording:delay=%dms,duration=%dms,settings=profile,settings=internal/jfr/latscope.jfc,filename=%s.jfr Svc %s.jsonl %d %g %s%s",
		o.Delay.Milliseconds(), o.Length.Milliseconds(), o.Name, o.Name, o.Clients, o.Run.Seconds(), o.Mode, workers)
	return r, nil
}

// SvcRequest is one request as Svc timed it itself.
type SvcRequest struct {
	Start   int64 `json:"start_unix_ns"` // wall clock, millisecond resolution
	Latency int64 `json:"latency_ns"`
	CPU     int64 `json:"cpu_ns"`      // ThreadMXBean, around the library's filter
	LockCPU int64 `json:"lock_cpu_ns"` // ThreadMXBean, inside the locked section
	Lock    int64 `json:"lock_ns"`     // nanoTime, inside the locked section
	DB      int64 `json:"db_ns"`       // nanoTime, borrow to release
}

// ReadSvc reads Svc's results.
func ReadSvc(path string) ([]SvcRequest, error) {
	b, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var out []SvcRequest
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r SvcRequest
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Throughput is the clients' completions per second over whole seconds
// [from, to) of the run.
func (s SvcSummary) Throughput(from, to int) float64 {
	var n int64
	for i := from; i < to && i < len(s.PerSecond); i++ {
		n += s.PerSecond[i]
	}
	return float64(n) / float64(max(1, to-from))
}

// readMaybeGzip reads path, gunzipped when it ends in .gz (the kept
// results, NAME.jsonl.gz).
func readMaybeGzip(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	b, err = io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
