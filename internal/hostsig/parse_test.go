package hostsig

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tail := " 1 1 1 0 -1 4194304 101 0 0 0 250 30 0 0 20 0 7 0 319120 3133440 390 0 0\n"
	tests := []struct {
		name, in string
		want     ProcStat
		wantErr  string
	}{
		{"plain", "42 (sh) R" + tail, ProcStat{PID: 42, Comm: "sh", State: "R", UTime: 2500 * time.Millisecond, STime: 300 * time.Millisecond, NumThreads: 7, StartTime: 3191200 * time.Millisecond, StartTicks: 319120}, ""},
		{"comm with ) and spaces", "7 (a) R (b) S" + tail, ProcStat{PID: 7, Comm: "a) R (b", State: "S", UTime: 2500 * time.Millisecond, STime: 300 * time.Millisecond, NumThreads: 7, StartTime: 3191200 * time.Millisecond, StartTicks: 319120}, ""},
		{"comm with newline", "7 (x\ny) S" + tail, ProcStat{PID: 7, Comm: "x\ny", State: "S", UTime: 2500 * time.Millisecond, STime: 300 * time.Millisecond, NumThreads: 7, StartTime: 3191200 * time.Millisecond, StartTicks: 319120}, ""},
		{"empty", "", ProcStat{}, "no (comm)"},
		{"no close paren", "1 (sh R 1 2", ProcStat{}, "no (comm)"},
		{"short", "1 (sh) R 1 2 3", ProcStat{}, "fields after comm"},
		{"bad utime", "1 (sh) R 1 1 1 0 -1 4194304 101 0 0 0 x 30 0 0 20 0 7 0 319120 3133440 390", ProcStat{}, "field 14"},
		{"negative threads", "1 (sh) R 1 1 1 0 -1 4194304 101 0 0 0 1 30 0 0 20 0 -7 0 319120 3133440 390", ProcStat{}, "num_threads"},
		{"bad pid", "x (sh) R" + tail, ProcStat{}, "pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.in), 100)
			checkErr(t, err, tt.wantErr)
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// checkErr fails unless err contains want ("" meaning no error).
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		in      string
		want    Schedstat
		wantErr string
	}{
		{"311322859 1117981973 67\n", Schedstat{311322859, 1117981973, 67}, ""},
		{"0 0 1", Schedstat{0, 0, 1}, ""},
		{"1 2", Schedstat{}, "2 fields"},
		{"1 2 3 4", Schedstat{}, "4 fields"},
		{"1 -2 3", Schedstat{}, "field 2"},
		{"18446744073709551615 0 0", Schedstat{1<<63 - 1, 0, 0}, ""}, // saturates
	}
	for _, tt := range tests {
		got, err := ParseSchedstat([]byte(tt.in))
		checkErr(t, err, tt.wantErr)
		if got != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseSystemStat(t *testing.T) {
	tests := []struct {
		in      string
		hz      int
		want    SystemCPU
		wantErr string
	}{
		{"cpu  1181 0 1691 634331 103 0 21 69 0 0\ncpu0 1 2 3\n", 100, SystemCPU{User: 11810 * time.Millisecond, System: 16910 * time.Millisecond, Idle: 6343310 * time.Millisecond, IOWait: 1030 * time.Millisecond, SoftIRQ: 210 * time.Millisecond, Steal: 690 * time.Millisecond, CPUs: 1}, ""},
		{"cpu 1 2 3 4 5 6 7 8", 250, SystemCPU{4 * time.Millisecond, 8 * time.Millisecond, 12 * time.Millisecond, 16 * time.Millisecond, 20 * time.Millisecond, 24 * time.Millisecond, 28 * time.Millisecond, 32 * time.Millisecond, 0}, ""},
		// The CPU count: cpuN lines up to the next line; 0 when the text may be cut short.
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncpu1 1\ncpu7 1\nintr 5\ncpu2 1\n", 100, SystemCPU{Steal: 80 * time.Millisecond, CPUs: 3}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncpu1 1\nint", 100, SystemCPU{Steal: 80 * time.Millisecond, CPUs: 2}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncpu1 1\nintr 3 4", 100, SystemCPU{Steal: 80 * time.Millisecond, CPUs: 2}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncpu1 1", 100, SystemCPU{Steal: 80 * time.Millisecond}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncp", 100, SystemCPU{Steal: 80 * time.Millisecond}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu0 1\ncpux 1\n", 100, SystemCPU{Steal: 80 * time.Millisecond, CPUs: 1}, ""},
		{"cpu 0 0 0 0 0 0 0 8\ncpu 1\n", 100, SystemCPU{Steal: 80 * time.Millisecond}, ""},
		{"cpu 1 2 3 4 5 6 7", 100, SystemCPU{}, "want at least 8"},
		{"cpu0 1 2 3 4 5 6 7 8", 100, SystemCPU{}, "not the cpu line"},
		{"intr 1\ncpu 1 2 3 4 5 6 7 8", 100, SystemCPU{}, "not the cpu line"},
		{"cpu 1 2 3 4 5 6 7 x", 100, SystemCPU{}, "cpu field 8"},
		{"cpu 1 2 3 4 5 6 7 8", 0, SystemCPU{}, "tick rate"},
	}
	for _, tt := range tests {
		got, err := ParseSystemStat([]byte(tt.in), tt.hz)
		checkErr(t, err, tt.wantErr)
		if got != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParsePSI(t *testing.T) {
	some := PSILine{0.66, 0.36, 0.18, 4780070 * time.Microsecond}
	tests := []struct {
		name, in string
		want     PSI
		wantErr  string
	}{
		{"some and full", "some avg10=0.66 avg60=0.36 avg300=0.18 total=4780070\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", PSI{Some: some, HasFull: true}, ""},
		{"old kernel, some only", "some avg10=0.66 avg60=0.36 avg300=0.18 total=4780070\n", PSI{Some: some}, ""},
		{"unknown field ignored", "some avg10=0.66 avg60=0.36 avg300=0.18 total=4780070 new=1", PSI{Some: some}, ""},
		{"no some", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", PSI{}, "no some"},
		{"empty", "", PSI{}, "line 1"},
		{"missing total", "some avg10=0.66 avg60=0.36 avg300=0.18", PSI{}, "want avg10"},
		{"duplicate key", "some avg10=1 avg10=1 avg60=0.36 total=1", PSI{}, "twice"},
		{"twice some", "some avg10=0 avg60=0 avg300=0 total=1\nsome avg10=0 avg60=0 avg300=0 total=1", PSI{}, "unexpected"},
		{"not a percentage", "some avg10=101 avg60=0 avg300=0 total=1", PSI{}, "percentage"},
		{"NaN", "some avg10=NaN avg60=0 avg300=0 total=1", PSI{}, "percentage"},
		{"bad total", "some avg10=0 avg60=0 avg300=0 total=-1", PSI{}, "total"},
		{"no =", "some avg10", PSI{}, "key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePSI([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseCPUStat(t *testing.T) {
	tests := []struct {
		name, in string
		v        CgroupVersion
		want     CPUStat
		wantErr  string
	}{
		{"v1", "nr_periods 15\nnr_throttled 14\nthrottled_time 1063313249\nnr_bursts 0\nburst_time 0\n", CgroupV1,
			CPUStat{Version: CgroupV1, HasThrottling: true, Periods: 15, Throttled: 14, ThrottledTime: 1063313249}, ""},
		{"v2 without cpu controller", "usage_usec 309857\nuser_usec 309857\nsystem_usec 0\nnice_usec 0\n", CgroupV2,
			CPUStat{Version: CgroupV2, HasUsage: true, Usage: 309857 * time.Microsecond, User: 309857 * time.Microsecond}, ""},
		{"v2 with cpu controller", "usage_usec 3\nuser_usec 2\nsystem_usec 1\nnr_periods 9\nnr_throttled 4\nthrottled_usec 5000\nnr_bursts 0\nburst_usec 0\n", CgroupV2,
			CPUStat{Version: CgroupV2, HasUsage: true, Usage: 3 * time.Microsecond, User: 2 * time.Microsecond, System: time.Microsecond, HasThrottling: true, Periods: 9, Throttled: 4, ThrottledTime: 5 * time.Millisecond}, ""},
		{"v2 half the throttling keys", "usage_usec 3\nuser_usec 2\nsystem_usec 1\nnr_periods 9\n", CgroupV2, CPUStat{}, "no nr_throttled"},
		{"v1 file read as v2", "nr_periods 15\nnr_throttled 14\nthrottled_time 1\n", CgroupV2, CPUStat{}, "no usage_usec"},
		{"v2 file read as v1", "usage_usec 3\nuser_usec 2\nsystem_usec 1\n", CgroupV1, CPUStat{}, "no nr_periods"},
		{"duplicate", "nr_periods 1\nnr_periods 2\nnr_throttled 0\nthrottled_time 0\n", CgroupV1, CPUStat{}, "twice"},
		{"bad line", "nr_periods\n", CgroupV1, CPUStat{}, "line 1"},
		{"bad number", "nr_periods -1\nnr_throttled 0\nthrottled_time 0\n", CgroupV1, CPUStat{}, "nr_periods"},
		{"no version", "nr_periods 1", NoCgroup, CPUStat{}, "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUStat([]byte(tt.in), tt.v)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		name, in string
		want     ProcCgroup
		wantErr  string
	}{
		{"hybrid", "2:cpuacct:/\n1:cpu:/lab\n0::/lab\n", ProcCgroup{V1CPU: "/lab", V2: "/lab"}, ""},
		{"joined cpu,cpuacct", "4:cpu,cpuacct:/a/b\n", ProcCgroup{V1CPU: "/a/b"}, ""},
		{"cpuacct alone is not cpu", "2:cpuacct:/x\n0::/\n", ProcCgroup{V2: "/"}, ""},
		{"path with colon", "0::/a:b\n", ProcCgroup{V2: "/a:b"}, ""},
		{"named v1 hierarchy", "9:name=systemd:/\n0::/u\n", ProcCgroup{V2: "/u"}, ""},
		{"two cpu lines", "1:cpu:/a\n2:cpu,cpuacct:/b\n", ProcCgroup{}, "second cpu"},
		{"relative path", "0::lab\n", ProcCgroup{}, "line 1"},
		{"no colons", "garbage\n", ProcCgroup{}, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcCgroup([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseMountinfo(t *testing.T) {
	in := "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
		"41 31 0:38 /kube/pod1 /sys/fs/cgroup\\040x rw,relatime shared:9 master:2 - cgroup2 cgroup2 rw,nsdelegate\n"
	want := []Mount{
		{Root: "/", Point: "/sys/fs/cgroup/cpu", FSType: "cgroup", SuperOptions: []string{"rw", "cpu", "cpuacct"}},
		{Root: "/kube/pod1", Point: "/sys/fs/cgroup x", FSType: "cgroup2", SuperOptions: []string{"rw", "nsdelegate"}},
	}
	got, err := ParseMountinfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"1 2 3 / /x rw cgroup", "1 2 - cgroup cgroup rw", "1 2 3 / /x rw - cgroup"} {
		if _, err := ParseMountinfo([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCgroupDir(t *testing.T) {
	mounts := []Mount{
		{Root: "/", Point: "/sys/fs/cgroup/cpu", FSType: "cgroup", SuperOptions: []string{"rw", "cpu"}},
		{Root: "/", Point: "/sys/fs/cgroup/cpuacct", FSType: "cgroup", SuperOptions: []string{"rw", "cpuacct"}},
		{Root: "/kube/pod1", Point: "/sys/fs/cgroup/unified", FSType: "cgroup2"},
	}
	tests := []struct {
		v       CgroupVersion
		path    string
		want    string
		wantErr string
	}{
		{CgroupV1, "/", "/sys/fs/cgroup/cpu", ""},
		{CgroupV1, "/lab/x", "/sys/fs/cgroup/cpu/lab/x", ""},
		{CgroupV2, "/kube/pod1", "/sys/fs/cgroup/unified", ""},
		{CgroupV2, "/kube/pod1/c", "/sys/fs/cgroup/unified/c", ""},
		{CgroupV2, "/kube/pod10", "", "under no mount root"},
		{CgroupV2, "/", "", "under no mount root"},
		{CgroupV2, "/../other", "", "not a path inside"},
		{NoCgroup, "/", "", "no none cgroup mount"},
	}
	for _, tt := range tests {
		got, err := CgroupDir(mounts, tt.v, tt.path)
		checkErr(t, err, tt.wantErr)
		if got != tt.want {
			t.Errorf("%v %s: got %q, want %q", tt.v, tt.path, got, tt.want)
		}
	}
}

func TestParseQuota(t *testing.T) {
	tests := []struct {
		name          string
		quota, period string // v1 when period != "", else v2 cpu.max in quota
		want          Quota
		wantErr       string
	}{
		{"v1 limited", "20000\n", "100000\n", Quota{true, 0.2, 100 * time.Millisecond}, ""},
		{"v1 no limit", "-1\n", "100000\n", Quota{Period: 100 * time.Millisecond}, ""},
		{"v1 bad period", "1", "0", Quota{}, "period"},
		{"v1 bad quota", "x", "100000", Quota{}, "cfs_quota_us"},
		{"v2 limited", "150000 100000\n", "", Quota{true, 1.5, 100 * time.Millisecond}, ""},
		{"v2 no limit", "max 100000\n", "", Quota{Period: 100 * time.Millisecond}, ""},
		{"v2 one field", "max\n", "", Quota{}, "not \"quota period\""},
		{"v2 negative", "-5 100000", "", Quota{}, "neither max"},
		{"v2 bad period", "max x", "", Quota{}, "period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Quota
			var err error
			if tt.period != "" {
				got, err = ParseCFSQuota([]byte(tt.quota), []byte(tt.period))
			} else {
				got, err = ParseCPUMax([]byte(tt.quota))
			}
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGOMAXPROCSFor(t *testing.T) {
	tests := []struct {
		q    Quota
		ncpu int
		want int
	}{
		{NoLimit, 8, 8},
		{Quota{true, 0.2, DefaultPeriod}, 8, 2},
		{Quota{true, 2.5, DefaultPeriod}, 8, 3},
		{Quota{true, 16, DefaultPeriod}, 8, 8},
		{Quota{true, 0.5, DefaultPeriod}, 1, 1},
	}
	for _, tt := range tests {
		if got := GOMAXPROCSFor(tt.q, tt.ncpu); got != tt.want {
			t.Errorf("GOMAXPROCSFor(%v, %d) = %d, want %d", tt.q, tt.ncpu, got, tt.want)
		}
	}
}

func TestParseAuxvClockTick(t *testing.T) {
	vec := func(pairs ...uint64) []byte {
		b := make([]byte, 8*len(pairs))
		for i, p := range pairs {
			binary.NativeEndian.PutUint64(b[8*i:], p)
		}
		return b
	}
	tests := []struct {
		in      []byte
		want    int
		wantErr string
	}{
		{vec(6, 4096, 17, 100, 0, 0), 100, ""},
		{vec(17, 250), 250, ""},
		{vec(6, 4096, 0, 0, 17, 100), 0, "before end"},
		{vec(17, 0), 0, "implausible"},
		{vec(6, 4096), 0, "no AT_CLKTCK"},
		{nil, 0, "no AT_CLKTCK"},
	}
	for _, tt := range tests {
		got, err := ParseAuxvClockTick(tt.in)
		checkErr(t, err, tt.wantErr)
		if got != tt.want {
			t.Errorf("got %d, want %d", got, tt.want)
		}
	}
	hz, err := UserHZ()
	if err != nil || hz != DefaultUserHZ {
		t.Errorf("UserHZ() = %d, %v; want %d (x86-64 and arm64 Linux)", hz, err, DefaultUserHZ)
	}
}
