// Command compare runs trace tools over the same trace file, interleaved and
// repeated, and prints a table of throughput and peak memory with ratios to a
// baseline, plus how the run stood against latscope's performance targets.
//
// Each tool is a flag -tool 'NAME|COMMAND ARGS...'; {trace} in the command is
// replaced by the trace file and the command line is split on spaces. Peak
// RSS is the child's ru_maxrss from wait4. A tool may be capped in memory
// with -cap (RLIMIT_AS through prlimit(1)); a tool that fails is reported as
// such, with its stderr's last line.
//
// Usage:
//
//	compare -trace lab/bench/out/trace-100MB.trace -reps 3 -base readloop \
//	  -tool 'readloop|/tmp/b/readloop {trace}' \
//	  -tool 'latscope analyze|/tmp/b/latscope analyze {trace}'
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options are the command's flags.
type Options struct {
	Trace   string
	Reps    int
	Tools   []tool
	Base    string // the tool ratios are taken against
	Subject string // the tool the targets are about
	Rival   string // the tool the subject must beat
	Ratio   float64
	RSS     int64 // target peak RSS in bytes, judged on traces of at least TargetSize
	Size    int64
	Cap     int64 // RLIMIT_AS for capped tools, bytes
	Capped  []string
	After   []string // tools run after the interleaved runs, all their runs in a row
}

// DefaultOptions are the flags' defaults (the targets of issue 2).
var DefaultOptions = Options{Reps: 3, Ratio: 1.5, RSS: 300 << 20, Size: 1 << 30, Cap: 16 << 30}

type tool struct {
	name string
	argv []string
}

type toolsFlag struct{ ts *[]tool }

func (f toolsFlag) String() string { return "" }

func (f toolsFlag) Set(v string) error {
	name, cmd, ok := strings.Cut(v, "|")
	argv := strings.Fields(cmd)
	if !ok || name == "" || len(argv) == 0 {
		return fmt.Errorf("-tool %q: want NAME|COMMAND ARGS", v)
	}
	*f.ts = append(*f.ts, tool{name: name, argv: argv})
	return nil
}

type listFlag struct{ l *[]string }

func (f listFlag) String() string     { return "" }
func (f listFlag) Set(v string) error { *f.l = append(*f.l, v); return nil }

func main() {
	if err := run(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
}

func run(stdout, stderr io.Writer, args []string) error {
	o := DefaultOptions
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.StringVar(&o.Trace, "trace", "", "trace `FILE` every tool reads")
	fs.IntVar(&o.Reps, "reps", o.Reps, "runs of each tool (interleaved)")
	fs.Var(toolsFlag{&o.Tools}, "tool", "a tool, as `NAME|COMMAND ARGS` ({trace} is the trace file; repeatable)")
	fs.StringVar(&o.Base, "base", "", "`NAME` of the tool ratios are taken against")
	fs.StringVar(&o.Subject, "subject", "", "`NAME` of the tool the targets are about")
	fs.StringVar(&o.Rival, "rival", "", "`NAME` of the tool the subject must be faster than")
	fs.Float64Var(&o.Ratio, "target-ratio", o.Ratio, "target: subject within this factor of the base")
	fs.Int64Var(&o.RSS, "target-rss", o.RSS, "target: subject's peak RSS under this many `BYTES`...")
	fs.Int64Var(&o.Size, "target-size", o.Size, "...on a trace of at least this many `BYTES`")
	fs.Int64Var(&o.Cap, "cap", o.Cap, "address-space limit in `BYTES` for the tools named by -capped")
	fs.Var(listFlag{&o.Capped}, "capped", "`NAME` of a tool to run under -cap (repeatable)")
	fs.Var(listFlag{&o.After}, "after", "`NAME` of a tool to run after the interleaved runs of the others, all its runs in a row (repeatable): for a tool whose memory use disturbs the runs that follow it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := os.Stat(o.Trace)
	if err != nil {
		return fmt.Errorf("-trace: %w", err)
	}
	if len(o.Tools) == 0 || o.Reps < 1 {
		return errors.New("want at least one -tool and -reps ≥ 1")
	}
	names := []struct{ flag, name string }{{"-base", o.Base}, {"-subject", o.Subject}, {"-rival", o.Rival}}
	for _, a := range o.After {
		names = append(names, struct{ flag, name string }{"-after", a})
	}
	for _, n := range names {
		if n.name != "" && !slices.ContainsFunc(o.Tools, func(t tool) bool { return t.name == n.name }) {
			return fmt.Errorf("%s %q: no -tool of that name", n.flag, n.name)
		}
	}
	res := make([][]sample, len(o.Tools))
	one := func(rep, i int) {
		s := measure(o.Tools[i], o)
		res[i] = append(res[i], s)
		fmt.Fprintf(stderr, "compare: run %d/%d %-28s %s\n", rep+1, o.Reps, o.Tools[i].name, s)
	}
	after := func(i int) bool { return slices.Contains(o.After, o.Tools[i].name) }
	for rep := range o.Reps {
		for i := range o.Tools {
			if !after(i) {
				one(rep, i)
			}
		}
	}
	for i := range o.Tools {
		if after(i) {
			for rep := range o.Reps {
				one(rep, i)
			}
		}
	}
	sums := make([]summary, len(o.Tools))
	for i, t := range o.Tools {
		sums[i] = summarize(t.name, res[i], st.Size())
	}
	report(stdout, o, st.Size(), sums)
	return nil
}

// sample is one run of one tool.
type sample struct {
	wall   time.Duration
	cpu    time.Duration // the child's user+system time
	rss    int64         // bytes
	others float64       // CPU cores used by other processes during the run
	load   float64       // 1-minute load average at the start
	err    string
}

func (s sample) String() string {
	if s.err != "" {
		return fmt.Sprintf("FAILED after %.1fs (peak RSS %d MiB): %s", s.wall.Seconds(), s.rss>>20, s.err)
	}
	return fmt.Sprintf("%6.2fs wall %6.2fs cpu %6d MiB peak RSS  load %.2f  others' CPU %.2f cores", s.wall.Seconds(), s.cpu.Seconds(), s.rss>>20, s.load, s.others)
}

// measure runs t once.
func measure(t tool, o Options) sample {
	argv := make([]string, len(t.argv))
	for i, a := range t.argv {
		argv[i] = strings.ReplaceAll(a, "{trace}", o.Trace)
	}
	if slices.Contains(o.Capped, t.name) {
		argv = append([]string{"prlimit", "--as=" + strconv.FormatInt(o.Cap, 10), "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	s := sample{load: loadAvg()}
	busy0 := busyTicks()
	t0 := time.Now()
	err := cmd.Run()
	s.wall = time.Since(t0)
	busy := busyTicks() - busy0
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.rss = ru.Maxrss << 10
			s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	if busy >= 0 {
		s.others = max(0, (time.Duration(busy)*10*time.Millisecond-s.cpu).Seconds()/s.wall.Seconds())
	}
	if err != nil {
		s.err = reason(errb.String())
		if s.err == "" {
			s.err = err.Error()
		}
	}
	return s
}

// reason picks the line of a failed tool's stderr that says why: a Go
// runtime's fatal error, a panic, or else the last line.
func reason(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "runtime: out of memory") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// loadAvg returns the 1-minute load average, or -1.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// busyTicks returns the machine's non-idle CPU time in clock ticks (USER_HZ,
// 100 per second on Linux) from /proc/stat, or -1.
func busyTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return busy
}
