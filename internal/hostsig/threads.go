package hostsig

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// threadSums keeps a monotonic schedstat sum over all threads of a process, alive or exited:
// an exited thread keeps contributing its last reading.
type threadSums struct {
	dir     *os.File // /proc/PID/task
	open    map[string]*threadSum
	retired Schedstat // last readings of threads that are gone
	gen     uint64
}

type threadSum struct {
	f    *pfile
	last Schedstat
	gen  uint64 // of the last read that listed the thread
}

// read lists the threads and reads each one's schedstat.
func (t *threadSums) read() (Schedstat, error) {
	t.gen++
	if _, err := t.dir.Seek(0, io.SeekStart); err != nil {
		return Schedstat{}, fmt.Errorf("list threads: %w", err)
	}
	names, err := t.dir.Readdirnames(-1)
	if err != nil {
		return Schedstat{}, fmt.Errorf("list threads in %s: %w", t.dir.Name(), err)
	}
	for _, name := range names {
		if err := t.readThread(name); err != nil {
			return Schedstat{}, err
		}
	}
	for name, ts := range t.open {
		if ts.gen != t.gen {
			t.retire(name, ts) // no longer listed: exited
		}
	}
	sum := t.retired
	for _, ts := range t.open {
		sum = sum.Add(ts.last)
	}
	return sum, nil
}

// readThread reads one thread; a thread that exited meanwhile is retired, not an error.
func (t *threadSums) readThread(name string) error {
	ts := t.open[name]
	if ts == nil {
		f, err := openPfile(filepath.Join(t.dir.Name(), name, "schedstat"))
		if Gone(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("thread schedstat: %w", err)
		}
		ts = &threadSum{f: f}
		t.open[name] = ts
	}
	b, err := ts.f.read(0)
	if Gone(err) {
		t.retire(name, ts)
		return nil
	}
	if err != nil {
		return err
	}
	st, err := ParseSchedstat(b)
	if err != nil {
		return fmt.Errorf("%s: %w", ts.f.f.Name(), err)
	}
	if st.Run < ts.last.Run || st.Wait < ts.last.Wait || st.Timeslices < ts.last.Timeslices {
		t.retired = t.retired.Add(ts.last) // a new thread with a reused TID
	}
	ts.last, ts.gen = st, t.gen
	return nil
}

func (t *threadSums) retire(name string, ts *threadSum) {
	t.retired = t.retired.Add(ts.last)
	ts.f.close()
	delete(t.open, name)
}

func (t *threadSums) close() {
	for name, ts := range t.open {
		ts.f.close()
		delete(t.open, name)
	}
	if t.dir != nil {
		t.dir.Close()
	}
}
