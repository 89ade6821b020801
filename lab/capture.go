package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/internal/capture"
)

// Window is one measured window of a service: an execution trace with CPU
// samples, a CPU profile, and the process CPU counter at both ends.
type Window struct {
	Trace, Profile string        // files
	CPU            time.Duration // process utime+stime over the window (/proc/PID/stat)
	Start, End     time.Time
}

// CaptureWindow records a service for the given whole number of seconds
// into dir/name/ with package capture (trace and CPU profile together, so
// the trace carries CPU samples), reading the process's utime+stime from
// /proc/PID/stat just before and after: the lab's independent instrument.
func CaptureWindow(ctx context.Context, p *Process, seconds int, dir, name string) (*Window, error) {
	cpu0, err := p.CPU()
	if err != nil {
		return nil, fmt.Errorf("read %s CPU: %w", p.Name, err)
	}
	out := filepath.Join(dir, name)
	m, err := capture.Run(ctx, out, capture.Options{URL: p.URL(), Seconds: seconds, Timeout: time.Duration(seconds+30) * time.Second})
	if err != nil {
		return nil, err
	}
	cpu1, err := p.CPU()
	if err != nil {
		return nil, fmt.Errorf("read %s CPU: %w", p.Name, err)
	}
	w := &Window{Trace: filepath.Join(out, m.Trace.Name), CPU: cpu1 - cpu0, Start: m.Start, End: m.End}
	if m.Profile != nil {
		w.Profile = filepath.Join(out, m.Profile.Name)
	}
	return w, nil
}
