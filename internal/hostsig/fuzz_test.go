package hostsig

import (
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds the real testdata files matching pattern, and extra inputs, to f's corpus.
func addSeeds(f *testing.F, pattern string, extra ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

func FuzzParseProcStat(f *testing.F) {
	addSeeds(f, "proc_pid_stat_*", "1 ()) R 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5", "1 (")
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProcStat(b, DefaultUserHZ)
		if err == nil && (p.UTime < 0 || p.STime < 0 || p.NumThreads < 0 || len(p.State) != 1) {
			t.Errorf("accepted impossible %+v", p)
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	addSeeds(f, "schedstat_*", "0 0 0", "99999999999999999999 1 1")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSchedstat(b)
		if err == nil && (s.Run < 0 || s.Wait < 0) {
			t.Errorf("accepted negative %+v", s)
		}
	})
}

func FuzzParseSystemStat(f *testing.F) {
	addSeeds(f, "proc_stat.txt", "cpu 1 2 3 4 5 6 7 8")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseSystemStat(b, DefaultUserHZ)
		if err == nil && (c.Steal < 0 || c.CPUs < 0 || c.CPUs > len(b)/5) {
			t.Errorf("accepted negative steal or an impossible CPU count %+v", c)
		}
	})
}

func FuzzParsePSI(f *testing.F) {
	addSeeds(f, "*pressure*", "some avg10=0 avg60=0 avg300=0 total=0")
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePSI(b)
		if err == nil && (p.Some.Total < 0 || p.Full.Total < 0 || p.Some.Avg10 > 100) {
			t.Errorf("accepted impossible %+v", p)
		}
	})
}

func FuzzParseCPUStat(f *testing.F) {
	addSeeds(f, "cpu_stat_*", "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 1\nnr_throttled 1\nthrottled_usec 1\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []CgroupVersion{CgroupV1, CgroupV2} {
			s, err := ParseCPUStat(b, v)
			if err == nil && (s.Version != v || s.ThrottledTime < 0 || (v == CgroupV1 && !s.HasThrottling)) {
				t.Errorf("%v: accepted impossible %+v", v, s)
			}
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	addSeeds(f, "proc_pid_cgroup_*", "1:cpu,cpuacct:/a b\n0::/")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseProcCgroup(b)
		if err != nil {
			return
		}
		for _, p := range []string{c.V1CPU, c.V2} {
			if p != "" && p[0] != '/' {
				t.Errorf("relative path %q", p)
			}
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	addSeeds(f, "mountinfo.txt", `1 2 3:4 /a\040b /x\134 rw - cgroup2 cgroup2 rw`)
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := ParseMountinfo(b)
		if err != nil {
			return
		}
		for _, m := range ms {
			CgroupDir(ms, CgroupV1, m.Root) // must not panic on whatever was accepted
			CgroupDir(ms, CgroupV2, m.Point)
		}
	})
}

func FuzzParseCFSQuota(f *testing.F) {
	f.Add([]byte("20000\n"), []byte("100000\n"))
	f.Add([]byte("-1\n"), []byte("100000\n"))
	f.Fuzz(func(t *testing.T, quota, period []byte) {
		q, err := ParseCFSQuota(quota, period)
		if err == nil && (q.Period <= 0 || q.CPUs < 0) {
			t.Errorf("accepted impossible %+v", q)
		}
	})
}

func FuzzParseCPUMax(f *testing.F) {
	for _, s := range []string{"max 100000\n", "20000 100000\n", "max", "1 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseCPUMax(b)
		if err == nil && (q.Period <= 0 || q.CPUs < 0) {
			t.Errorf("accepted impossible %+v", q)
		}
	})
}

func FuzzParseAuxvClockTick(f *testing.F) {
	addSeeds(f, "auxv.bin", "")
	f.Fuzz(func(t *testing.T, b []byte) {
		hz, err := ParseAuxvClockTick(b)
		if err == nil && hz <= 0 {
			t.Errorf("accepted hz %d", hz)
		}
	})
}
