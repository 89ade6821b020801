package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
)

// Window is one measured window of a service: an execution trace with CPU
// samples, a CPU profile, and the process CPU counter at both ends.
type Window struct {
	Trace, Profile string        // files
	CPU            time.Duration // process utime+stime over the window
	Start, End     time.Time
}

// CaptureWindow records a service for the given whole number of seconds:
// it starts /debug/pprof/trace and /debug/pprof/profile together (so the
// trace carries CPU samples) and reads /proc/PID/stat before and after.
func CaptureWindow(ctx context.Context, p *Process, seconds int, dir, name string) (*Window, error) {
	w := &Window{Trace: filepath.Join(dir, name+".trace"), Profile: filepath.Join(dir, name+".cpu.pprof")}
	cpu0, err := p.CPU()
	if err != nil {
		return nil, fmt.Errorf("read %s CPU: %w", p.Name, err)
	}
	w.Start = time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return fetch(gctx, fmt.Sprintf("%s/debug/pprof/trace?seconds=%d", p.URL(), seconds), w.Trace, seconds)
	})
	g.Go(func() error {
		return fetch(gctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.URL(), seconds), w.Profile, seconds)
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	w.End = time.Now()
	cpu1, err := p.CPU()
	if err != nil {
		return nil, fmt.Errorf("read %s CPU: %w", p.Name, err)
	}
	w.CPU = cpu1 - cpu0
	return w, nil
}

// fetch downloads url into file atomically.
func fetch(ctx context.Context, url, file string, seconds int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+30)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("capture: GET %s: %s: %s", url, resp.Status, b)
	}
	tmp := file + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("capture: GET %s: %w", url, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}
