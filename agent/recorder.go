package agent

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
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
	dir    *snapDir
	sample func() // writes a host sample and the CPU counter into the trace
	last   atomic.Int64
	busy   atomic.Bool

	mu     sync.Mutex // guards closed and wg.Add against close's wg.Wait
	closed bool
	wg     sync.WaitGroup
}

// startRecorder creates and verifies Dir (openSnapDir), clears its stale
// temporary files and starts the flight recorder.
func startRecorder(o Options, sample func()) (*recorder, error) {
	dir, err := openSnapDir(o.Dir, o.defaultDir)
	if err != nil {
		return nil, err
	}
	dir.removeStaleTemps(time.Hour)
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: o.FlightMinAge, MaxBytes: o.FlightMaxBytes})
	if err := fr.Start(); err != nil {
		dir.close()
		return nil, fmt.Errorf("agent: starting the flight recorder (only one may run per process): %w", err)
	}
	return &recorder{fr: fr, o: o, dir: dir, sample: sample}, nil
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
	if err := r.write(name); err != nil {
		return "", fmt.Errorf("agent: snapshot %s: %w", path, err)
	}
	if err := prune(r.dir, name, r.o.MaxSnapshots, r.o.MaxDirBytes); err != nil {
		return path, fmt.Errorf("agent: pruning %s: %w", r.o.Dir, err)
	}
	return path, nil
}

// write writes the window to a temporary file (mode 0600) and renames it
// to name.
func (r *recorder) write(name string) (err error) {
	f, tmp, err := r.dir.createTemp()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			r.dir.root.Remove(tmp)
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
	return r.dir.root.Rename(tmp, name)
}

// close waits for snapshots being written and stops the flight recorder.
func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
	r.fr.Stop()
	r.dir.close()
}

// SnapshotFile is one snapshot in the directory.
type SnapshotFile struct {
	Name  string    `json:"name"`
	Bytes int64     `json:"bytes"`
	Time  time.Time `json:"time"`
}

// isSnapshotName reports whether name is a snapshot's file name (and
// nothing that could leave the directory).
func isSnapshotName(name string) bool {
	return strings.HasPrefix(name, snapshotPrefix) && strings.HasSuffix(name, snapshotSuffix) &&
		!strings.ContainsAny(name, `/\`) && len(name) < 256
}

// prune deletes the oldest snapshots of dir until at most maxFiles remain
// and they take at most maxBytes; keep is never deleted, nor is any file
// that is not one of ours (snapDir.list).
func prune(dir *snapDir, keep string, maxFiles int, maxBytes int64) error {
	files, err := dir.list()
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
		if err := dir.remove(f.Name); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		count--
		total -= f.Bytes
	}
	return errors.Join(errs...)
}
