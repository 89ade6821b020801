package hostsig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// DefaultInterval is the sampling interval of Sampler.Run when Options.Interval is zero.
// docs/method.md §8 asks for one second or faster.
const DefaultInterval = 100 * time.Millisecond

// Options configures a Sampler.
type Options struct {
	Interval time.Duration // between samples in Run; DefaultInterval when 0
}

// ErrExited is returned by Sampler.Sample once the process is gone.
var ErrExited = errors.New("process exited")

// Sampler reads the host signals of one process. It keeps the kernel files open and re-reads
// them, so a sample costs tens of microseconds. It follows the process into another cgroup.
// A Sampler is not safe for concurrent use.
type Sampler struct {
	pid      int
	interval time.Duration
	hz       int

	stat, cgroup, sysStat, sysPSI *pfile
	sysStatErr, sysPSIErr         string
	mounts                        []Mount

	threads threadSums

	mountsErr string

	cgroupText  string // last contents of /proc/PID/cgroup
	place       Place
	throttle    []*pfile // cpu.stat of the cgroup and its ancestors
	throttleErr string
	cgPSI       *pfile
	cgPSIErr    string
}

// NewSampler opens the files for process pid. It fails only when the process cannot be
// read at all; every other missing file becomes an absent source in each Sample.
func NewSampler(pid int, opts Options) (*Sampler, error) {
	s := &Sampler{pid: pid, interval: opts.Interval}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	s.hz, _ = UserHZ() // falls back to DefaultUserHZ
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	var err error
	if s.stat, err = openPfile(filepath.Join(dir, "stat")); err != nil {
		return nil, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	if s.cgroup, err = openPfile(filepath.Join(dir, "cgroup")); err != nil {
		s.Close()
		return nil, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	if s.threads.dir, err = os.Open(filepath.Join(dir, "task")); err != nil {
		s.Close()
		return nil, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s.threads.open = map[string]*threadSum{}
	s.sysStat, s.sysStatErr = openSource("/proc/stat")
	s.sysPSI, s.sysPSIErr = openSource("/proc/pressure/cpu")
	if s.mounts, err = readMounts(); err != nil {
		s.mountsErr = err.Error()
	}
	return s, nil
}

func openSource(name string) (*pfile, string) {
	f, err := openPfile(name)
	if err != nil {
		return nil, err.Error()
	}
	return f, ""
}

// Close closes the files. The Sampler must not be used afterwards.
func (s *Sampler) Close() error {
	for _, f := range []*pfile{s.stat, s.cgroup, s.sysStat, s.sysPSI} {
		f.close()
	}
	s.closeCgroupFiles()
	s.threads.close()
	return nil
}

// Run takes a sample every interval, the first one at once, and passes it to fn, until ctx
// is done (it then returns nil) or sampling fails (ErrExited when the process is gone).
func (s *Sampler) Run(ctx context.Context, fn func(Sample)) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		smp, err := s.Sample()
		if err != nil {
			return err
		}
		fn(smp)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sample reads every source once.
func (s *Sampler) Sample() (Sample, error) {
	mono, err := Monotonic()
	if err != nil {
		return Sample{}, err
	}
	smp := Sample{Mono: mono, Wall: time.Now().Round(0), PID: s.pid}
	if err := s.readProcess(&smp); err != nil {
		return Sample{}, err
	}
	s.readSchedstat(&smp)
	s.follow()
	smp.CgroupPath, smp.CgroupV2Path = s.place.CPUPath, s.place.V2Path
	s.readThrottle(&smp)
	s.readCgroupPSI(&smp)
	s.readSystem(&smp)
	return smp, nil
}

func (s *Sampler) readProcess(smp *Sample) error {
	b, err := s.stat.read(0)
	if Gone(err) {
		return fmt.Errorf("sample pid %d: %w", s.pid, ErrExited)
	}
	if err != nil {
		return fmt.Errorf("sample pid %d: %w", s.pid, err)
	}
	ps, err := ParseProcStat(b, s.hz)
	if err != nil {
		return fmt.Errorf("sample pid %d: %w", s.pid, err)
	}
	smp.UTime, smp.STime, smp.Threads = ps.UTime, ps.STime, ps.NumThreads
	return nil
}

func (s *Sampler) readSchedstat(smp *Sample) {
	sum, err := s.threads.read()
	if err != nil {
		smp.Absent[SourceSchedstat] = err.Error()
		return
	}
	smp.Run, smp.Wait, smp.Timeslices = sum.Run, sum.Wait, sum.Timeslices
}

func (s *Sampler) readSystem(smp *Sample) {
	smp.Absent[SourceSteal] = s.sysStatErr
	if s.sysStat != nil {
		b, err := s.sysStat.read(0) // all of it: the cpuN lines too, for the CPU count
		var c SystemCPU
		if err == nil {
			c, err = ParseSystemStat(b, s.hz)
		}
		if err != nil {
			smp.Absent[SourceSteal] = err.Error()
		}
		smp.Steal, smp.CPUs = c.Steal, c.CPUs
	}
	smp.Absent[SourceSystemPSI] = s.sysPSIErr
	if s.sysPSI != nil {
		p, err := readPSI(s.sysPSI)
		if err != nil {
			smp.Absent[SourceSystemPSI] = err.Error()
		}
		smp.SystemSome, smp.SystemFull = p.Some.Total, p.Full.Total
	}
}

func readPSI(f *pfile) (PSI, error) {
	b, err := f.read(0)
	if err != nil {
		return PSI{}, err
	}
	p, err := ParsePSI(b)
	if err != nil {
		return PSI{}, fmt.Errorf("%s: %w", f.f.Name(), err)
	}
	return p, nil
}
