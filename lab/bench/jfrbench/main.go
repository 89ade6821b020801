// Command jfrbench measures how long `latscope analyze rec.jfr` takes with
// each of its two JFR event sources on the same recording: the binary
// reader (jfr.ReadBinary, the default) and the JDK's `jfr print --json`
// (LATSCOPE_JFR_READER=print). It records a workload first (Load.java, a
// JDK service doing CPU work, monitor, socket, park and sleep waits) unless
// it is given a recording, then runs both alternately and prints each one's
// median wall time, peak RSS and the ratio, plus the size of the JSON that
// jfr print writes for the events the analysis reads.
//
//	go run ./lab/bench/jfrbench                      # record 30 s, 3 runs of each
//	go run ./lab/bench/jfrbench -rec x.jfr -handler Foo.handle -requests 1000
//
// Everything goes under -out (lab/bench/out/jfr). Timings on a shared host are
// noisy: run it on a quiet machine, and compare medians. lab/bench/jfr.sh runs
// it from the repository's top.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
)

func main() {
	if err := run(context.Background(), os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "jfrbench:", err)
		os.Exit(1)
	}
}

type options struct {
	out, rec, handler string
	requests, reps    int
	dur               time.Duration
}

func run(ctx context.Context, w io.Writer, args []string) error {
	fs := flag.NewFlagSet("jfrbench", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.out, "out", filepath.Join("lab", "bench", "out", "jfr"), "directory for the recording and the binaries")
	fs.StringVar(&o.rec, "rec", "", "a recording to analyse instead of recording Load.java (then give -handler and -requests)")
	fs.StringVar(&o.handler, "handler", "Load.handle", "the --handler frame")
	fs.IntVar(&o.requests, "requests", 0, "the --requests count (default: what Load printed)")
	fs.IntVar(&o.reps, "reps", 3, "runs of each reader")
	fs.DurationVar(&o.dur, "dur", 30*time.Second, "how long to record Load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if o.rec == "" {
		n, err := record(ctx, &o)
		if err != nil {
			return err
		}
		if o.requests == 0 {
			o.requests = n
		}
	}
	if o.requests <= 0 {
		return errors.New("-requests: give the recording's request count")
	}
	bin := filepath.Join(o.out, "latscope")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/latscope").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/latscope (run from the repository's top): %v: %s", err, out)
	}
	return compare(ctx, w, o, bin)
}

// record compiles and runs Load.java under JFR (settings=profile plus
// latscope.jfc, as docs/jfr.md says) and returns its request count.
func record(ctx context.Context, o *options) (int, error) {
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "Load.java")
	classes := filepath.Join(o.out, "classes")
	if out, err := exec.CommandContext(ctx, "javac", "-d", classes, src).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("javac %s: %v: %s", src, err, out)
	}
	o.rec = filepath.Join(o.out, "load.jfr")
	cmd := exec.CommandContext(ctx, "java", "-cp", classes,
		"-XX:StartFlightRecording:filename="+o.rec+",settings=profile,settings="+jfrtest.Settings(),
		"Load", strconv.Itoa(int(o.dur.Seconds())))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("java Load: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return 0, errors.New("java Load printed no request count")
	}
	return strconv.Atoi(lines[len(lines)-1])
}

// sample is one timed run.
type sample struct {
	wall time.Duration
	cpu  time.Duration // user + system, of the process and its children
	rss  int64         // KiB
}

func compare(ctx context.Context, w io.Writer, o options, bin string) error {
	st, err := os.Stat(o.rec)
	if err != nil {
		return err
	}
	rec, err := jfr.ReadRecording(o.rec)
	if err != nil {
		return err
	}
	events, jsonBytes, err := sizes(ctx, o.rec)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "recording %s: %.2f MB, %v, %d chunk(s); %d events of the types the analysis reads; jfr print --json writes %.1f MB of them (%.0fx the recording)\n",
		o.rec, float64(st.Size())/1e6, rec.End().Sub(rec.Start()).Round(time.Second), len(rec.Chunks), events, float64(jsonBytes)/1e6, float64(jsonBytes)/float64(st.Size()))
	readers := []string{"binary", "print"}
	runs := map[string][]sample{}
	var outputs [2]string
	for i := range o.reps {
		for j, r := range readers {
			s, out, err := analyze(ctx, bin, r, o)
			if err != nil {
				return err
			}
			runs[r] = append(runs[r], s)
			if i == 0 {
				outputs[j] = out
			}
		}
	}
	if outputs[0] != outputs[1] {
		fmt.Fprintln(w, "WARNING: the two readers' analyses differ")
	}
	med := map[string]sample{}
	for _, r := range readers {
		ss := runs[r]
		slices.SortFunc(ss, func(a, b sample) int { return int(a.wall - b.wall) })
		med[r] = ss[len(ss)/2]
		fmt.Fprintf(w, "latscope analyze, %-6s reader: median %8.3f s wall, %8.3f s CPU over %d runs (wall min %.3f, max %.3f), peak RSS %d MiB\n",
			r, med[r].wall.Seconds(), med[r].cpu.Seconds(), len(ss), ss[0].wall.Seconds(), ss[len(ss)-1].wall.Seconds(), med[r].rss/1024)
	}
	fmt.Fprintf(w, "speed-up of latscope analyze: %.1fx wall, %.1fx CPU (jfr print / binary, medians); analyses identical: %v\n",
		med["print"].wall.Seconds()/med["binary"].wall.Seconds(), med["print"].cpu.Seconds()/med["binary"].cpu.Seconds(), outputs[0] == outputs[1])
	// the readers alone, in this process, with a callback that does nothing
	var rs [2]sample
	for i, read := range []func(context.Context, string, jfr.PrintOptions, func(*jfr.Event) error) error{jfr.ReadBinary, jfr.Print} {
		s, err := timed(func() error {
			return read(ctx, o.rec, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(*jfr.Event) error { return nil })
		})
		if err != nil {
			return err
		}
		rs[i] = s
	}
	fmt.Fprintf(w, "the readers alone (one run each): binary %.3f s wall, %.3f s CPU; jfr print + decoding %.3f s wall, %.3f s CPU: %.1fx wall, %.1fx CPU\n",
		rs[0].wall.Seconds(), rs[0].cpu.Seconds(), rs[1].wall.Seconds(), rs[1].cpu.Seconds(), rs[1].wall.Seconds()/rs[0].wall.Seconds(), rs[1].cpu.Seconds()/rs[0].cpu.Seconds())
	return nil
}

// timed runs f and measures its wall and CPU time (this process's and its
// children's).
func timed(f func() error) (sample, error) {
	cpu := func() time.Duration {
		var d time.Duration
		for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
			var ru syscall.Rusage
			if syscall.Getrusage(who, &ru) == nil {
				d += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
		}
		return d
	}
	c0, t0 := cpu(), time.Now()
	err := f()
	return sample{wall: time.Since(t0), cpu: cpu() - c0}, err
}

// analyze runs latscope analyze on the recording with one reader.
func analyze(ctx context.Context, bin, reader string, o options) (sample, string, error) {
	cmd := exec.CommandContext(ctx, bin, "analyze", "--handler", o.handler, "--requests", strconv.Itoa(o.requests), o.rec)
	cmd.Env = append(os.Environ(), jfr.ReaderEnv+"="+reader)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil {
		return sample{}, "", fmt.Errorf("latscope analyze (%s reader): %v: %s", reader, err, out)
	}
	s := sample{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rss = ru.Maxrss
	}
	return s, string(out), nil
}

// sizes counts the analysis's events and the bytes of jfr print's JSON of
// them.
func sizes(ctx context.Context, rec string) (events int, jsonBytes int64, err error) {
	err = jfr.ReadBinary(ctx, rec, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(*jfr.Event) error {
		events++
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	tool, err := jfr.FindTool()
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, tool, "print", "--json", "--stack-depth", strconv.Itoa(jfr.DefaultStackDepth), "--events", strings.Join(jfr.Events, ","), rec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	n, _ := io.Copy(io.Discard, bufio.NewReader(out))
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("jfr print: %w", err)
	}
	return events, n, nil
}
