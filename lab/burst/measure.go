package burst

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/lab"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
)

// Window is one measured window of a variant, from the independent counter
// (/proc/PID/stat) and the service's event counter.
type Window struct {
	Wall       time.Duration `json:"wall_ns"`
	CPU        time.Duration `json:"cpu_ns"`     // utime+stime of the burst-serve process
	Run        time.Duration `json:"run_ns"`     // on-CPU time of its threads (schedstat), to the nanosecond
	Events     uint64        `json:"events"`     // processed in the window
	Timeslices uint64        `json:"timeslices"` // times its threads were put on a CPU (schedstat)
	Threads    int           `json:"threads"`    // OS threads at the end
}

// CPUPerEvent returns the CPU per event in nanoseconds.
func (w Window) CPUPerEvent() float64 {
	if w.Events == 0 {
		return 0
	}
	return float64(w.CPU) / float64(w.Events)
}

// Resolution returns the uncertainty of CPUPerEvent in nanoseconds: one
// clock tick at each end of the window.
func (w Window) Resolution(hz int) float64 {
	if w.Events == 0 || hz <= 0 {
		return 0
	}
	return 2 * float64(time.Second) / float64(hz) / float64(w.Events)
}

// measureWindow measures one window of length d.
func measureWindow(ctx context.Context, c *child, d time.Duration) (Window, error) {
	return c.counted(ctx, func() error { lab.Sleep(ctx, d); return ctx.Err() })
}

// counted reads the independent counter and the event counter around f.
func (c *child) counted(ctx context.Context, f func() error) (Window, error) {
	s0, err := c.sampler.Sample()
	if err != nil {
		return Window{}, fmt.Errorf("sample burst-serve: %w", err)
	}
	st0, err := c.stats(ctx)
	if err != nil {
		return Window{}, err
	}
	if err := f(); err != nil {
		return Window{}, err
	}
	s1, err := c.sampler.Sample()
	if err != nil {
		return Window{}, fmt.Errorf("sample burst-serve: %w", err)
	}
	st1, err := c.stats(ctx)
	if err != nil {
		return Window{}, err
	}
	dl := hostsig.Diff(s0, s1)
	return Window{
		Wall: s1.Mono - s0.Mono, CPU: dl.CPU(), Run: dl.Run, Events: st1.Events - st0.Events,
		Timeslices: dl.Timeslices, Threads: s1.Threads,
	}, nil
}

// medianWindow returns the window with the median CPU per event.
func medianWindow(ws []Window) Window {
	if len(ws) == 0 {
		return Window{}
	}
	s := append([]Window(nil), ws...)
	sort.Slice(s, func(i, j int) bool { return s[i].CPUPerEvent() < s[j].CPUPerEvent() })
	return s[len(s)/2]
}

// host describes the child for the scheduler analysis.
func host(c *child, st Stats) sched.Host {
	h := sched.Host{GOMAXPROCS: st.GOMAXPROCS, NumCPU: runtime.NumCPU()}
	if l, err := hostsig.ReadLimit(c.cmd.Process.Pid); err == nil {
		h.Limit = &l
	}
	return h
}

// profile fetches a CPU profile of d at hz, saves it as path and analyses
// it. The window is the independent counter over the same time, to tell
// how much of the process's CPU the profile's samples cover.
func (c *child) profile(ctx context.Context, d time.Duration, hz int, path string, h sched.Host) (*sched.Report, Window, error) {
	var body []byte
	w, err := c.counted(ctx, func() (err error) {
		body, err = c.get(ctx, fmt.Sprintf("/profile?seconds=%g&hz=%d", d.Seconds(), hz))
		return err
	})
	if err != nil {
		return nil, w, err
	}
	rep, err := saveProfile(body, path, h)
	return rep, w, err
}

func saveProfile(body []byte, path string, h sched.Host) (*sched.Report, error) {
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nil, fmt.Errorf("save profile: %w", err)
	}
	p, err := profile.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return sched.FromProfile(p, sched.Options{Host: h})
}

// trace fetches an execution trace with CPU samples, saves it as path and
// analyses it.
func (c *child) trace(ctx context.Context, d time.Duration, hz int, path string, h sched.Host) (*sched.Report, error) {
	body, err := c.get(ctx, fmt.Sprintf("/trace?seconds=%g&hz=%d", d.Seconds(), hz))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nil, fmt.Errorf("save trace: %w", err)
	}
	var sa *sched.Analyzer
	mk := func(st *tracein.Stacks, _ frame.Rules) analysis.Consumer {
		sa = sched.New(sched.Options{Host: h}, st)
		return sa
	}
	if _, err := analysis.Run(ctx, filepath.Base(path), bytes.NewReader(body), analysis.Options{}, mk); err != nil {
		return nil, fmt.Errorf("scheduler analysis: %w", err)
	}
	return sa.Finalize(), nil
}
