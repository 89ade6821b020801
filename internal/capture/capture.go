package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
	"golang.org/x/sync/errgroup"
)

// File names inside a capture directory.
const (
	TraceFile   = "trace.out"
	ProfileFile = "cpu.pprof"
	MetaFile    = "capture.json"
)

// PartialSuffix marks the directory a capture is written into before it is
// complete.
const PartialSuffix = ".partial"

// Meta is the content of capture.json.
type Meta struct {
	URL     string    `json:"url"`
	Seconds int       `json:"seconds"`
	Start   time.Time `json:"start"` // when the trace and profile were requested
	End     time.Time `json:"end"`   // when both had arrived
	Trace   File      `json:"trace"`
	Profile *File     `json:"profile,omitempty"`
	CPU     CPU       `json:"cpu"`
	// MainModule is the service's main module path, from the path label
	// of go_build_info on /metrics (client_golang's build-info collector);
	// "" when the service does not export it. The analysis takes that
	// module's code to be the application unless told otherwise (--app).
	MainModule string `json:"main_module,omitempty"`
	// Warnings are what the capture could not do (no metrics, say).
	Warnings []string `json:"warnings,omitempty"`
}

// File is one downloaded file.
type File struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// CPU is the process CPU counter read from /metrics before and after the
// window. The window it covers is a little longer than the trace's: from
// the first /metrics request to the last one.
type CPU struct {
	Metric string `json:"metric"`
	// Seconds is After - Before: the process's CPU time over the window;
	// -1 when unknown (then Error says why).
	Seconds    float64   `json:"seconds"`
	Before     float64   `json:"before,omitempty"`
	After      float64   `json:"after,omitempty"`
	BeforeTime time.Time `json:"before_time,omitzero"`
	AfterTime  time.Time `json:"after_time,omitzero"`
	Error      string    `json:"error,omitempty"`
}

// Run captures o.Seconds seconds from the service at o.URL into dir, which
// must not exist yet, and returns what it wrote. On error nothing is left
// at dir (nor at dir.partial).
func Run(ctx context.Context, dir string, o Options) (*Meta, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("capture: %s already exists; choose another -o", dir)
	}
	partial := dir + PartialSuffix
	if err := removePartial(partial); err != nil { // left by a capture that died
		return nil, fmt.Errorf("capture: %w", err)
	}
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	m, err := run(ctx, partial, o)
	if err == nil {
		err = os.Rename(partial, dir)
	}
	if err != nil {
		os.RemoveAll(partial)
		return nil, err
	}
	return m, nil
}

// removePartial removes a partial directory left by a capture that died,
// and refuses to remove anything else of that name: a symbolic link, a
// file, or a directory holding files a capture does not write.
func removePartial(partial string) error {
	st, err := os.Lstat(partial)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	foreign := fmt.Errorf("%s exists and is not a capture's partial directory; remove it or choose another -o", partial)
	if !st.IsDir() {
		return foreign
	}
	entries, err := os.ReadDir(partial)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.Name() {
		case TraceFile, ProfileFile, MetaFile:
		default:
			return foreign
		}
	}
	return os.RemoveAll(partial)
}

// run fetches everything into the partial directory.
func run(ctx context.Context, partial string, o Options) (*Meta, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	f := &fetcher{c: o.client(), token: o.Token, timeout: o.timeout()}
	// capture.json is shared: it never holds the password.
	m := &Meta{URL: httpurl.Redact(o.URL), Seconds: o.Seconds, CPU: CPU{Metric: CPUMetric, Seconds: -1}}
	before, cpuErr := readMetrics(ctx, f, o)
	if ctx.Err() != nil || errors.Is(cpuErr, errUnreachable) {
		return nil, fmt.Errorf("capture: %w", cpuErr)
	}
	m.MainModule = before.module
	m.Start = time.Now()
	if err := downloads(ctx, f, o, partial, m); err != nil {
		return nil, err
	}
	m.End = time.Now()
	if cpuErr == nil {
		var after scrape
		after, cpuErr = readMetrics(ctx, f, o)
		if m.MainModule == "" {
			m.MainModule = after.module
		}
		if cpuErr == nil && after.cpu < before.cpu {
			cpuErr = fmt.Errorf("%s went down from %g to %g: did the service restart?", CPUMetric, before.cpu, after.cpu)
		}
		if cpuErr == nil {
			m.CPU.Before, m.CPU.After, m.CPU.BeforeTime, m.CPU.AfterTime = before.cpu, after.cpu, before.at, after.at
			m.CPU.Seconds = after.cpu - before.cpu
		}
	}
	if cpuErr != nil {
		m.CPU.Error = cpuErr.Error()
		m.Warnings = append(m.Warnings, "no independent CPU counter: "+cpuErr.Error())
	}
	if err := writeMeta(filepath.Join(partial, MetaFile), m); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	return m, nil
}

// notServed is the advice for a 404 from one net/http/pprof endpoint
// (handler: "Trace" or "Profile"). Some services mount only part of
// net/http/pprof, so the message names the endpoint that is missing.
func notServed(endpoint, handler string) string {
	return fmt.Sprintf(`the service does not serve %s at this address (net/http/pprof's %s handler: import _ "net/http/pprof" and serve http.DefaultServeMux, or mount pprof.%s at %s on your mux)`,
		endpoint, handler, handler, endpoint)
}

// downloads fetches the trace and, concurrently, the CPU profile.
func downloads(ctx context.Context, f *fetcher, o Options, partial string, m *Meta) error {
	g, gctx := errgroup.WithContext(ctx)
	secs := strconv.Itoa(o.Seconds)
	g.Go(func() error {
		n, err := download(gctx, f, o, "/debug/pprof/trace?seconds="+secs, "trace", notServed("/debug/pprof/trace", "Trace"), filepath.Join(partial, TraceFile))
		m.Trace = File{Name: TraceFile, Bytes: n}
		return err
	})
	if !o.NoProfile {
		g.Go(func() error {
			n, err := download(gctx, f, o, "/debug/pprof/profile?seconds="+secs, "CPU profile", notServed("/debug/pprof/profile", "Profile"), filepath.Join(partial, ProfileFile))
			m.Profile = &File{Name: ProfileFile, Bytes: n}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// download fetches path into the file name; notFound is the advice for a 404.
func download(ctx context.Context, f *fetcher, o Options, path, what, notFound, name string) (int64, error) {
	file, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(file, 1<<20)
	n, err := f.fetch(ctx, o.endpoint(path), what, notFound, w, "")
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = file.Sync() // a full disk may only say so here or at Close
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// writeMeta writes m as indented JSON, synced to disk before the capture
// directory is renamed into place.
func writeMeta(name string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadMeta reads a capture directory's capture.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, MetaFile), err)
	}
	return &m, nil
}
