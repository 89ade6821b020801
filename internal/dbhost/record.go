package dbhost

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// DefaultPeriod is the recorder's sampling period: a statement's wait is
// placed to within one period on either side.
const DefaultPeriod = 10 * time.Millisecond

// heartbeat is how often the recorder writes a PID-0 line.
const heartbeat = time.Second

// rescan is how often the recorder lists the postmaster's children again
// (new connections).
const rescan = 100 * time.Millisecond

// Header is the first line's magic and version.
const Header = "latscope-dbhost 1"

// Recorder samples the run-queue wait of a process's children.
type Recorder struct {
	// Parent is the PID whose children are sampled (PostgreSQL's
	// postmaster: every backend is its child).
	Parent int
	// Period is the sampling period (0: DefaultPeriod).
	Period time.Duration
	// Proc is the proc file system's root ("": /proc).
	Proc string
}

// ErrParentExited is Run's error when the parent exited during the
// recording; what was recorded until then is written and flushed.
var ErrParentExited = errors.New("the process whose children were recorded exited")

// Command returns the command name of process pid (/proc/PID/comm), or an
// error that says it is not running.
func Command(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		if hostsig.Gone(err) {
			return "", fmt.Errorf("PID %d is not running", pid)
		}
		return "", fmt.Errorf("PID %d: %w", pid, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Run samples until ctx ends or the parent exits, writing to w. It
// returns nil when ctx ended, and ErrParentExited (wrapped, with the
// time) when the parent exited after the first sample.
func (r Recorder) Run(ctx context.Context, w io.Writer) error {
	s, err := r.start(w)
	if err != nil {
		return err
	}
	defer s.close()
	tick := time.NewTicker(s.period)
	defer tick.Stop()
	for {
		if err := s.pass(time.Now()); err != nil {
			if hostsig.Gone(err) {
				at := time.Now()
				fmt.Fprintf(s.bw, "%d 0 0\n", at.UnixNano())
				if err := s.bw.Flush(); err != nil {
					return err
				}
				return fmt.Errorf("%w (PID %d, by %s UTC)", ErrParentExited, r.Parent, at.UTC().Format("15:04:05.000"))
			}
			return err
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(s.bw, "%d 0 0\n", time.Now().UnixNano())
			return s.bw.Flush()
		case <-tick.C:
		}
	}
}

// sampler is a running recording.
type sampler struct {
	r                  Recorder
	proc               string
	period             time.Duration
	bw                 *bufio.Writer
	kids               []int
	last               map[int]time.Duration
	files              map[int]*os.File // each child's schedstat, kept open
	seen               map[int]bool     // the children read in this pass
	buf                [128]byte
	lastScan, lastBeat time.Time
	lastPass           time.Time
}

// start checks the parent and writes the header.
func (r Recorder) start(w io.Writer) (*sampler, error) {
	s := &sampler{r: r, proc: cmp.Or(r.Proc, "/proc"), period: r.Period, bw: bufio.NewWriter(w), last: map[int]time.Duration{}, files: map[int]*os.File{}, seen: map[int]bool{}}
	if s.period <= 0 {
		s.period = DefaultPeriod
	}
	var err error
	if s.kids, err = children(s.proc, r.Parent); err != nil {
		return nil, err
	}
	s.lastScan = time.Now()
	fmt.Fprintf(s.bw, "%s period_ns=%d\n", Header, s.period.Nanoseconds())
	return s, nil
}

// pass takes one sample of every child at now, listing the children
// again every rescan and writing a heartbeat every second.
func (s *sampler) pass(now time.Time) error {
	if now.Sub(s.lastScan) >= rescan {
		kids, err := children(s.proc, s.r.Parent)
		if err != nil {
			return err
		}
		s.kids, s.lastScan = kids, now
	}
	clear(s.seen)
	seen := s.seen
	for _, pid := range s.kids {
		wait, err := s.runDelay(pid)
		if err != nil {
			continue // exited since the listing
		}
		seen[pid] = true
		if prev, ok := s.last[pid]; !ok || wait != prev {
			fmt.Fprintf(s.bw, "%d %d %d\n", now.UnixNano(), pid, wait.Nanoseconds())
			s.last[pid] = wait
		}
	}
	for pid := range s.last {
		if !seen[pid] {
			delete(s.last, pid)
		}
	}
	for pid, f := range s.files {
		if !seen[pid] {
			f.Close()
			delete(s.files, pid)
		}
	}
	if gap := now.Sub(s.lastPass); !s.lastPass.IsZero() && 2*gap > 3*s.period {
		// a late pass: the counters moved since the previous one, which a
		// reader must not take for the period before this one
		fmt.Fprintf(s.bw, "%d 0 %d\n", now.UnixNano(), gap.Nanoseconds())
	}
	s.lastPass = now
	if now.Sub(s.lastBeat) >= heartbeat {
		fmt.Fprintf(s.bw, "%d 0 0\n", now.UnixNano())
		s.lastBeat = now
		return s.bw.Flush()
	}
	return nil
}

// children lists the children of pid, forked by any of its threads.
func children(proc string, pid int) ([]int, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("children of PID %d: %w", pid, err)
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue // the thread exited since the listing
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// runDelay reads a single-threaded process's run-queue wait, keeping its
// schedstat file open and reading it again from the start each time (one
// system call a sample, not three).
func (s *sampler) runDelay(pid int) (time.Duration, error) {
	f, ok := s.files[pid]
	if !ok {
		var err error
		if f, err = os.Open(filepath.Join(s.proc, strconv.Itoa(pid), "schedstat")); err != nil {
			return 0, err
		}
		s.files[pid] = f
	}
	n, err := f.ReadAt(s.buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		delete(s.files, pid)
		return 0, err
	}
	return waitField(s.buf[:n])
}

// waitField parses the second of schedstat's three numbers, the run-queue
// wait in ns, without the allocations of a general parse (the recorder
// reads it a hundred times a second per backend).
func waitField(b []byte) (time.Duration, error) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return 0, fmt.Errorf("schedstat %q: want three numbers", b)
	}
	var n int64
	j := i + 1
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		n = n*10 + int64(b[j]-'0')
	}
	if j == i+1 || j >= len(b) || b[j] != ' ' {
		return 0, fmt.Errorf("schedstat %q: want three numbers", b)
	}
	return time.Duration(n), nil
}

// close closes the files the sampler holds.
func (s *sampler) close() {
	for _, f := range s.files {
		f.Close()
	}
}
