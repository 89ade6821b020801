package hostsig

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeHost is a temporary directory laid out like the parts of a host a Sampler reads: /proc/PID
// (stat, cgroup, task/TID/schedstat), /proc/stat, /proc/pressure/cpu, and /sys/fs/cgroup with the
// v1 cpu hierarchy and the v2 unified one. Its files start as copies of testdata (real files of
// the project VM, testdata/README.md); its mounts are testdata/mountinfo.txt's, moved under the
// directory. A test rewrites a file in place (same inode) to change what the next Sample reads,
// as the kernel regenerates a file for each read.
type fakeHost struct {
	root   string
	pid    int
	mounts []Mount
}

const fakePID = 9027 // the pid of testdata/proc_pid_stat_spinner.txt

func newFakeHost(t *testing.T) *fakeHost {
	t.Helper()
	h := &fakeHost{root: t.TempDir(), pid: fakePID}
	mb := readTestdata(t, "mountinfo.txt")
	ms, err := ParseMountinfo(mb)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.FSType == "cgroup" || m.FSType == "cgroup2" {
			m.Point = filepath.Join(h.root, m.Point)
			h.mounts = append(h.mounts, m)
		}
	}
	pid := strconv.Itoa(h.pid)
	h.copy(t, "proc/"+pid+"/stat", "proc_pid_stat_spinner.txt")
	h.copy(t, "proc/"+pid+"/cgroup", "proc_pid_cgroup_lab.txt")
	h.copy(t, "proc/"+pid+"/task/"+pid+"/schedstat", "schedstat_spinner.txt")
	h.copy(t, "proc/stat", "proc_stat.txt")
	h.copy(t, "proc/pressure/cpu", "pressure_cpu.txt")
	h.copy(t, "sys/fs/cgroup/cpu/cpu.stat", "cpu_stat_v1_root.txt")
	h.copy(t, "sys/fs/cgroup/cpu/latscope-td/cpu.stat", "cpu_stat_v1_throttled.txt")
	h.copy(t, "sys/fs/cgroup/unified/cpu.stat", "cpu_stat_v2_root.txt")
	h.copy(t, "sys/fs/cgroup/unified/latscope-td/cpu.stat", "cpu_stat_v2_child.txt")
	h.copy(t, "sys/fs/cgroup/unified/latscope-td/cpu.pressure", "cpu_pressure_v2_child.txt")
	return h
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// write replaces the contents of the file at rel (below the root), creating it and its
// directory when missing; an existing file keeps its inode, so open pfiles see the new text.
func (h *fakeHost) write(t *testing.T, rel, text string) {
	t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHost) copy(t *testing.T, rel, testdata string) {
	t.Helper()
	h.write(t, rel, string(readTestdata(t, testdata)))
}

// procCgroup is the /proc/PID/cgroup of testdata/proc_pid_cgroup_lab.txt with the process in
// v1 cpu cgroup cpu and v2 cgroup v2 instead.
func procCgroup(t *testing.T, cpu, v2 string) string {
	t.Helper()
	s := string(readTestdata(t, "proc_pid_cgroup_lab.txt"))
	s = strings.Replace(s, "1:cpu:/latscope-td", "1:cpu:"+cpu, 1)
	return strings.Replace(s, "0::/latscope-td", "0::"+v2, 1)
}

// sampler opens the host's files as NewSampler opens the real /proc's, with the host's mounts
// in place of /proc/self/mountinfo's.
func (h *fakeHost) sampler(t *testing.T) *Sampler {
	t.Helper()
	s := &Sampler{pid: h.pid, interval: DefaultInterval, hz: DefaultUserHZ, mounts: h.mounts}
	t.Cleanup(func() { s.Close() })
	dir := filepath.Join(h.root, "proc", strconv.Itoa(h.pid))
	var err error
	if s.stat, err = openPfile(filepath.Join(dir, "stat")); err != nil {
		t.Fatal(err)
	}
	if s.cgroup, err = openPfile(filepath.Join(dir, "cgroup")); err != nil {
		t.Fatal(err)
	}
	if s.threads.dir, err = os.Open(filepath.Join(dir, "task")); err != nil {
		t.Fatal(err)
	}
	s.threads.open = map[string]*threadSum{}
	s.sysStat, s.sysStatErr = openSource(filepath.Join(h.root, "proc", "stat"))
	s.sysPSI, s.sysPSIErr = openSource(filepath.Join(h.root, "proc", "pressure", "cpu"))
	return s
}

func sample(t *testing.T, s *Sampler) Sample {
	t.Helper()
	smp, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return smp
}

// TestSamplerOnCopiedHost samples the throttled spinner of testdata as the lab saw it: in
// the v1 cgroup /latscope-td with a 0.2 CPU quota, and its v2 twin. Every field comes from
// one of the copied files; then the process moves, as a Sampler must notice.
func TestSamplerOnCopiedHost(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	s := h.sampler(t)
	a := sample(t, s)
	for src := range NumSources {
		if !a.Has(src) {
			t.Errorf("%v absent: %s", src, a.Absent[src])
		}
	}
	want := Sample{
		PID: fakePID, CgroupPath: "/latscope-td", CgroupV2Path: "/latscope-td",
		UTime: 310 * time.Millisecond, Threads: 1, // utime 31 ticks; num_threads 1
		Run: 311322859, Wait: 1117981973, Timeslices: 67, // schedstat_spinner.txt
		// cpu.stat of /latscope-td only: the root's is not added (it has no quota)
		CgroupVersion: CgroupV1, Periods: 15, Throttled: 14, ThrottledTime: 1063313249,
		CgroupSome: 732055 * time.Microsecond, CgroupFull: 732055 * time.Microsecond,
		SystemSome: 28577428 * time.Microsecond,
		Steal:      780 * time.Millisecond, CPUs: 2,
	}
	got := a
	got.Mono, got.Wall = 0, time.Time{}
	if got != want {
		t.Errorf("sample\n got %+v\nwant %+v", got, want)
	}

	// a child cgroup without a quota of its own (v1 shows zero counters there): the parent's
	// throttling is summed in, which the process's own cpu.stat would hide
	h.copy(t, "sys/fs/cgroup/cpu/latscope-td/inner/cpu.stat", "cpu_stat_v1_root.txt")
	h.copy(t, "sys/fs/cgroup/unified/latscope-td/inner/cpu.pressure", "cpu_pressure_v2_child.txt")
	h.write(t, "proc/9027/cgroup", procCgroup(t, "/latscope-td/inner", "/latscope-td/inner"))
	b := sample(t, s)
	if b.CgroupPath != "/latscope-td/inner" || b.Periods != 15 || b.Throttled != 14 || b.ThrottledTime != 1063313249 {
		t.Errorf("in a child: cgroup %s, periods %d, throttled %d (%v); want the parent's 15, 14 (1.063313249s)", b.CgroupPath, b.Periods, b.Throttled, b.ThrottledTime)
	}
	d := Diff(a, b)
	if want := "cgroup changed from /latscope-td to /latscope-td/inner"; d.Absent[SourceThrottle] != want {
		t.Errorf("throttle across the move: %q, want %q", d.Absent[SourceThrottle], want)
	}
	if want := "v2 cgroup changed from /latscope-td to /latscope-td/inner"; d.Absent[SourceCgroupPSI] != want {
		t.Errorf("cgroup PSI across the move: %q, want %q", d.Absent[SourceCgroupPSI], want)
	}
	if !d.Has(SourceProcess) || !d.Has(SourceSchedstat) || !d.Has(SourceSteal) || d.Periods != 0 || d.CgroupSome != 0 {
		t.Errorf("delta across the move: %+v", d)
	}

	// the root cgroup: its own cpu.stat is read (nothing above it), and its v2 pressure is
	// the machine's, so the cgroup PSI is absent rather than read twice
	h.copy(t, "proc/9027/cgroup", "proc_pid_cgroup_root.txt")
	c := sample(t, s)
	if c.CgroupPath != "/" || c.CgroupV2Path != "/" || !c.Has(SourceThrottle) || c.Periods != 0 {
		t.Errorf("in the root: %+v", c)
	}
	if want := "the process's v2 cgroup is the root, whose cpu.pressure is the machine's PSI"; c.Absent[SourceCgroupPSI] != want {
		t.Errorf("cgroup PSI in the root: %q, want %q", c.Absent[SourceCgroupPSI], want)
	}
	if c2 := sample(t, s); c2.Absent != c.Absent || c2.CgroupPath != "/" {
		t.Errorf("unchanged /proc/PID/cgroup read again: %+v, before %+v", c2.Absent, c.Absent)
	}
}

// TestSamplerAbsentSources breaks one copied file or mount at a time: the source it feeds is
// absent with a reason naming what went wrong, and the others are still read.
func TestSamplerAbsentSources(t *testing.T) {
	t.Parallel()
	v2only := func(h *fakeHost, s *Sampler) {
		s.mounts = nil
		for _, m := range h.mounts {
			if m.FSType == "cgroup2" {
				s.mounts = append(s.mounts, m)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, h *fakeHost, s *Sampler)
		src   Source // the source that is absent
		want  string // in its reason
		also  Source // another absent source with the same reason; NumSources: none
	}{
		{"no mountinfo", func(t *testing.T, h *fakeHost, s *Sampler) {
			s.mountsErr = "read mounts: open /proc/self/mountinfo: permission denied"
		}, SourceThrottle, "read mounts: open /proc/self/mountinfo: permission denied", SourceCgroupPSI},
		{"bad /proc/PID/cgroup", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "proc/9027/cgroup", "1:cpu\n")
		}, SourceThrottle, `parse /proc/PID/cgroup: line 1: "1:cpu" is not id:controllers:/path`, SourceCgroupPSI},
		{"unreadable /proc/PID/cgroup", func(t *testing.T, h *fakeHost, s *Sampler) {
			s.cgroup.close()
			var err error
			if s.cgroup, err = openPfile(h.root); err != nil { // a directory: pread fails
				t.Fatal(err)
			}
		}, SourceThrottle, "is a directory", SourceCgroupPSI},
		{"no cgroup mount", func(t *testing.T, h *fakeHost, s *Sampler) {
			s.mounts = []Mount{}
		}, SourceThrottle, "locate cgroup: no v1 cgroup mount with the cpu controller in mountinfo", SourceCgroupPSI},
		{"no cpu.stat", func(t *testing.T, h *fakeHost, s *Sampler) {
			os.Remove(filepath.Join(h.root, "sys/fs/cgroup/cpu/latscope-td/cpu.stat"))
		}, SourceThrottle, "sys/fs/cgroup/cpu/latscope-td/cpu.stat: no such file or directory", NumSources},
		{"bad cpu.stat", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "sys/fs/cgroup/cpu/latscope-td/cpu.stat", "nr_periods 15\nnr_throttled\n")
		}, SourceThrottle, `latscope-td/cpu.stat: parse cpu.stat: line 2: "nr_throttled" is not "key value"`, NumSources},
		{"v2 without the cpu controller", func(t *testing.T, h *fakeHost, s *Sampler) {
			v2only(h, s)
			h.write(t, "proc/9027/cgroup", "0::/latscope-td\n")
		}, SourceThrottle, "v2 cgroup /latscope-td has no throttling counters (cpu controller not enabled)", NumSources},
		{"no v2 hierarchy", func(t *testing.T, h *fakeHost, s *Sampler) {
			s.mounts = slicesWithout(h.mounts, "cgroup2")
		}, SourceCgroupPSI, "no v2 cgroup hierarchy mounted", NumSources},
		{"no cpu.pressure", func(t *testing.T, h *fakeHost, s *Sampler) {
			os.Remove(filepath.Join(h.root, "sys/fs/cgroup/unified/latscope-td/cpu.pressure"))
		}, SourceCgroupPSI, "latscope-td/cpu.pressure: no such file or directory", NumSources},
		{"bad cpu.pressure", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "sys/fs/cgroup/unified/latscope-td/cpu.pressure", "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n")
		}, SourceCgroupPSI, "latscope-td/cpu.pressure: parse pressure: no some line", NumSources},
		{"bad /proc/stat", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "proc/stat", "cpu  9008 0 3639 656160 135 0 30\n")
		}, SourceSteal, "cpu line has 7 values, want at least 8 (steal)", NumSources},
		{"no /proc/pressure/cpu", func(t *testing.T, h *fakeHost, s *Sampler) {
			s.sysPSI.close()
			s.sysPSI, s.sysPSIErr = openSource(filepath.Join(h.root, "proc", "pressure", "memory"))
		}, SourceSystemPSI, "proc/pressure/memory: no such file or directory", NumSources},
		{"bad /proc/pressure/cpu", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "proc/pressure/cpu", "some avg10=136.04 avg60=23.72 avg300=7.13 total=28577428\n")
		}, SourceSystemPSI, `proc/pressure/cpu: parse pressure: line 1: avg10: "136.04" is not a percentage`, NumSources},
		{"bad schedstat", func(t *testing.T, h *fakeHost, s *Sampler) {
			h.write(t, "proc/9027/task/9027/schedstat", "311322859 1117981973\n")
		}, SourceSchedstat, "task/9027/schedstat: parse schedstat: 2 fields, want 3", NumSources},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHost(t)
			s := h.sampler(t)
			tt.setup(t, h, s)
			smp := sample(t, s)
			if got := smp.Absent[tt.src]; !strings.Contains(got, tt.want) {
				t.Errorf("%v absent because %q, want it to say %q", tt.src, got, tt.want)
			}
			for src := range NumSources {
				switch {
				case src == tt.src:
				case src == tt.also && smp.Absent[src] != smp.Absent[tt.src]:
					t.Errorf("%v absent because %q, want the same reason as %v", src, smp.Absent[src], tt.src)
				case src != tt.also && !smp.Has(src):
					t.Errorf("%v absent too: %s", src, smp.Absent[src])
				}
			}
			if !smp.Has(SourceThrottle) && (smp.Periods != 0 || smp.ThrottledTime != 0) {
				t.Errorf("absent throttling with counters %+v", smp)
			}
		})
	}
}

func slicesWithout(ms []Mount, fstype string) []Mount {
	var out []Mount
	for _, m := range ms {
		if m.FSType != fstype {
			out = append(out, m)
		}
	}
	return out
}

// TestSamplerProcessErrors: a /proc/PID/stat that does not parse fails the sample (there is
// nothing to sample without the process's CPU), naming the pid.
func TestSamplerProcessErrors(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	s := h.sampler(t)
	h.write(t, "proc/9027/stat", "9027 (sh) R 9021 9021\n")
	_, err := s.Sample()
	checkErr(t, err, "sample pid 9027: parse /proc/PID/stat: 3 fields after comm, want at least 20")
}

// TestSamplerThreadSums follows the threads of the copied process as threads come, exit and
// have their TID reused: the run, wait and timeslice sums never go backwards, so that every
// Diff has a schedstat increment.
func TestSamplerThreadSums(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	s := h.sampler(t)
	steps := []struct {
		name    string
		change  func()
		want    Schedstat
		threads int // open per-thread files afterwards
	}{
		{"one thread (schedstat_spinner.txt)", func() {}, Schedstat{311322859, 1117981973, 67}, 1},
		{"a second thread", func() { h.write(t, "proc/9027/task/9031/schedstat", "5000000 2000000 4\n") },
			Schedstat{316322859, 1119981973, 71}, 2},
		{"it runs on", func() { h.write(t, "proc/9027/task/9031/schedstat", "7000000 2500000 6\n") },
			Schedstat{318322859, 1120481973, 73}, 2},
		{"it exits and a new thread gets its TID between two samples", func() { h.write(t, "proc/9027/task/9031/schedstat", "1000000 0 1\n") },
			Schedstat{319322859, 1120481973, 74}, 2},
		{"that thread exits: its last reading stays", func() { os.RemoveAll(filepath.Join(h.root, "proc/9027/task/9031")) },
			Schedstat{319322859, 1120481973, 74}, 1},
		{"a third thread with the same TID", func() { h.write(t, "proc/9027/task/9031/schedstat", "3000000 1000000 2\n") },
			Schedstat{322322859, 1121481973, 76}, 2},
	}
	var prev Sample
	for i, st := range steps {
		st.change()
		smp := sample(t, s)
		got := Schedstat{smp.Run, smp.Wait, smp.Timeslices}
		if got != st.want || len(s.threads.open) != st.threads {
			t.Errorf("%s: sum %+v over %d open threads, want %+v over %d", st.name, got, len(s.threads.open), st.want, st.threads)
		}
		if i > 0 {
			if d := Diff(prev, smp); !d.Has(SourceSchedstat) {
				t.Errorf("%s: schedstat went backwards: %s", st.name, d.Absent[SourceSchedstat])
			}
		}
		prev = smp
	}
}
