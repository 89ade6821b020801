package agent

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot file names: snapshotPrefix + UTC time + "-p" + pid + "-" + reason
// + snapshotSuffix. The time comes first, so names sort oldest first.
const (
	snapshotPrefix = "latscope-"
	snapshotSuffix = ".trace"
	tempPattern    = ".latscope-*.tmp"
	nameTime       = "20060102T150405.000000Z"
)

// ErrBusy is returned by Snapshot while another snapshot is being written.
var ErrBusy = errors.New("agent: a snapshot is already being written")

// recorder owns the flight recorder and the snapshot directory.
type recorder struct {
	fr     *trace.FlightRecorder
	o      Options
	sample func() // writes a host sample and the CPU counter into the trace
	last   atomic.Int64
	busy   atomic.Bool

	mu     sync.Mutex // guards closed and wg.Add against close's wg.Wait
	closed bool
	wg     sync.WaitGroup
}

// startRecorder creates Dir, clears its stale temporary files and starts
// the flight recorder.
func startRecorder(o Options, sample func()) (*recorder, error) {
	if err := os.MkdirAll(o.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("agent: snapshot directory: %w", err)
	}
	removeStaleTemps(o.Dir, time.Hour)
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: o.FlightMinAge, MaxBytes: o.FlightMaxBytes})
	if err := fr.Start(); err != nil {
		return nil, fmt.Errorf("agent: starting the flight recorder (only one may run per process): %w", err)
	}
	return &recorder{fr: fr, o: o, sample: sample}, nil
}

// trigger writes a snapshot in the background unless one was written less
// than MinInterval ago or is being written.
func (r *recorder) trigger(reason string) {
	now := time.Now().UnixNano()
	last := r.last.Load()
	if last != 0 && now-last < int64(r.o.MinInterval) || r.busy.Load() {
		return
	}
	if !r.last.CompareAndSwap(last, now) {
		return // another request got there first
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		path, err := r.snapshot(reason)
		if r.o.OnSnapshot != nil && !errors.Is(err, ErrBusy) {
			r.o.OnSnapshot(path, err)
		}
	}()
}

// snapshot writes the flight recorder's window to a new file in Dir and
// prunes Dir. The file appears complete or not at all.
func (r *recorder) snapshot(reason string) (string, error) {
	if !r.busy.CompareAndSwap(false, true) {
		return "", ErrBusy
	}
	defer r.busy.Store(false)
	r.sample() // the CPU counter and host signals as of now, inside the window
	name := snapshotPrefix + time.Now().UTC().Format(nameTime) + fmt.Sprintf("-p%d-%s", os.Getpid(), reason) + snapshotSuffix
	path := filepath.Join(r.o.Dir, name)
	if err := r.write(path); err != nil {
		return "", fmt.Errorf("agent: snapshot %s: %w", path, err)
	}
	if err := prune(r.o.Dir, name, r.o.MaxSnapshots, r.o.MaxDirBytes); err != nil {
		return path, fmt.Errorf("agent: pruning %s: %w", r.o.Dir, err)
	}
	return path, nil
}

// write writes the window to a temporary file and renames it to path.
func (r *recorder) write(path string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := r.fr.WriteTo(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// close waits for snapshots being written and stops the flight recorder.
func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
	r.fr.Stop()
}

// SnapshotFile is one snapshot in the directory.
type SnapshotFile struct {
	Name  string    `json:"name"`
	Bytes int64     `json:"bytes"`
	Time  time.Time `json:"time"`
}

// listSnapshots returns the snapshots in dir, oldest first.
func listSnapshots(dir string) ([]SnapshotFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, e := range ents {
		if !isSnapshotName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		out = append(out, SnapshotFile{Name: e.Name(), Bytes: info.Size(), Time: info.ModTime()})
	}
	slices.SortFunc(out, func(a, b SnapshotFile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// isSnapshotName reports whether name is a snapshot's file name (and
// nothing that could leave the directory).
func isSnapshotName(name string) bool {
	return strings.HasPrefix(name, snapshotPrefix) && strings.HasSuffix(name, snapshotSuffix) &&
		!strings.ContainsAny(name, `/\`) && len(name) < 256
}

// prune deletes the oldest snapshots of dir until at most maxFiles remain
// and they take at most maxBytes; keep is never deleted.
func prune(dir, keep string, maxFiles int, maxBytes int64) error {
	files, err := listSnapshots(dir)
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.Bytes
	}
	var errs []error
	count := len(files)
	for _, f := range files {
		if count <= maxFiles && total <= maxBytes {
			break
		}
		if f.Name == keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		count--
		total -= f.Bytes
	}
	return errors.Join(errs...)
}

// removeStaleTemps deletes temporary files older than age (left by a
// process that died while writing).
func removeStaleTemps(dir string, age time.Duration) {
	tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, t := range tmps {
		if info, err := os.Stat(t); err == nil && time.Since(info.ModTime()) > age {
			os.Remove(t)
		}
	}
}
