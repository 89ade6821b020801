package hostsig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests below run the cgroup code on a temporary directory laid out like /sys/fs/cgroup,
// without root. A regular file stands in for each interface file the kernel provides: it
// keeps what was written to it, so a test truncates it before a write (the kernel's files
// hold no earlier text) and reads it after. What only a real hierarchy does — moving a
// process, enforcing the quota, rmdir of a cgroup that still has interface files — is
// TestSetQuota's and TestThrottling's, as root.

// cgroupFiles creates dir with empty files of the given names.
func cgroupFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// written returns what was written to dir/name since the last call, and empties the file.
func written(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCgroupWritesV2 sets the quota, weight and members of a v2 cgroup: cpu.max holds
// "quota period" in microseconds ("max" without a limit), which Quota reads back.
func TestCgroupWritesV2(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "unified", "lab")
	cgroupFiles(t, dir, "cpu.max", "cpu.weight", "cgroup.procs")
	c := &Cgroup{Name: "lab", Version: CgroupV2, Dir: dir, V2Dir: dir}
	for _, tt := range []struct {
		cpus   float64
		period time.Duration
		text   string
		want   Quota
	}{
		{0.5, 0, "50000 100000", Quota{true, 0.5, 100 * time.Millisecond}},
		{1.25, 20 * time.Millisecond, "25000 20000", Quota{true, 1.25, 20 * time.Millisecond}},
		{0, 0, "max 100000", Quota{Period: 100 * time.Millisecond}},
	} {
		if err := c.SetQuota(tt.cpus, tt.period); err != nil {
			t.Fatal(err)
		}
		q, err := c.Quota()
		if text := written(t, dir, "cpu.max"); text != tt.text || err != nil || q != tt.want {
			t.Errorf("SetQuota(%g, %v): wrote %q, read back %v (%v); want %q, %v", tt.cpus, tt.period, text, q, err, tt.text, tt.want)
		}
	}
	if err := c.SetWeight(10000); err != nil {
		t.Fatal(err)
	}
	if got := written(t, dir, "cpu.weight"); got != "10000" {
		t.Errorf("cpu.weight %q, want 10000 (v2 units)", got)
	}
	if err := c.Add(9027); err != nil {
		t.Fatal(err)
	}
	if got := written(t, dir, "cgroup.procs"); got != "9027" {
		t.Errorf("cgroup.procs %q, want 9027 written once (the v2 cgroup is its own twin)", got)
	}
}

// TestCgroupWritesV1 does the same for a v1 cgroup with a v2 twin: the quota goes to
// cpu.cfs_period_us and cpu.cfs_quota_us, the weight to cpu.shares (× 1024 / 100), and a
// process into both hierarchies.
func TestCgroupWritesV1(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir, twin := filepath.Join(root, "cpu", "lab"), filepath.Join(root, "unified", "lab")
	cgroupFiles(t, dir, "cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.shares", "cgroup.procs")
	cgroupFiles(t, twin, "cgroup.procs")
	c := &Cgroup{Name: "lab", Version: CgroupV1, Dir: dir, V2Dir: twin}
	if err := c.SetQuota(0.2, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	q, err := c.Quota()
	if p, qt := written(t, dir, "cpu.cfs_period_us"), written(t, dir, "cpu.cfs_quota_us"); p != "50000" || qt != "10000" || err != nil || q != (Quota{true, 0.2, 50 * time.Millisecond}) {
		t.Errorf("SetQuota(0.2, 50ms): period %q, quota %q, read back %v (%v)", p, qt, q, err)
	}
	if err := c.SetQuota(0, 0); err != nil {
		t.Fatal(err)
	}
	if p, qt := written(t, dir, "cpu.cfs_period_us"), written(t, dir, "cpu.cfs_quota_us"); p != "100000" || qt != "-1" {
		t.Errorf("SetQuota(0, 0): period %q, quota %q; want 100000, -1", p, qt)
	}
	for weight, shares := range map[int]string{100: "1024", 10000: "102400", 1: "10"} {
		if err := c.SetWeight(weight); err != nil {
			t.Fatal(err)
		}
		if got := written(t, dir, "cpu.shares"); got != shares {
			t.Errorf("SetWeight(%d): cpu.shares %q, want %s", weight, got, shares)
		}
	}
	if err := c.Add(9027); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, twin} {
		if got := written(t, d, "cgroup.procs"); got != "9027" {
			t.Errorf("%s/cgroup.procs %q, want 9027", d, got)
		}
	}
}

// TestCgroupWriteErrors: a missing interface file (a controller not enabled, a cgroup
// removed meanwhile) is an error naming the file; bad arguments are refused before any
// write.
func TestCgroupWriteErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir, twin := filepath.Join(root, "cpu", "lab"), filepath.Join(root, "unified", "lab")
	cgroupFiles(t, dir, "cgroup.procs", "cpu.cfs_quota_us")
	cgroupFiles(t, twin)
	c := &Cgroup{Name: "lab", Version: CgroupV1, Dir: dir, V2Dir: twin}
	err := c.SetQuota(1, 0)
	checkErr(t, err, "write "+filepath.Join(dir, "cpu.cfs_period_us")+": open ")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SetQuota error %v does not wrap fs.ErrNotExist", err)
	}
	if got := written(t, dir, "cpu.cfs_quota_us"); got != "" {
		t.Errorf("quota %q written after the period failed", got)
	}
	checkErr(t, c.SetWeight(100), "write "+filepath.Join(dir, "cpu.shares"))
	checkErr(t, c.Add(9027), "add pid 9027 to cgroup lab: write "+filepath.Join(twin, "cgroup.procs"))
	for _, tt := range []struct {
		err  error
		want string
	}{
		{c.SetQuota(0.5, 500*time.Microsecond), "set quota of lab: period 500µs outside 1ms..1s"},
		{c.SetQuota(0.005, 0), "set quota of lab: 0.005 CPU of 100ms is below the 1ms minimum"},
		{c.SetWeight(10001), "set weight of lab: 10001 outside 1..10000"},
	} {
		checkErr(t, tt.err, tt.want)
	}
}

// TestCheckV2CPU reads cgroup.subtree_control of a v2 root: a space-separated list of the
// controllers its children get. This machine's is empty (its cpu controller is bound to v1:
// /sys/fs/cgroup/unified/cgroup.subtree_control, 0 bytes); the other lists are in the
// kernel's format (Documentation/admin-guide/cgroup-v2.rst).
func TestCheckV2CPU(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{"", false},
		{"cpuset cpu io memory pids\n", true},
		{"cpu\n", true},
		{"cpuset io memory\n", false}, // cpuset is not cpu
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkV2CPU(dir)
		if tt.ok != (err == nil) {
			t.Errorf("subtree_control %q: %v", tt.text, err)
		}
		if err != nil && !strings.Contains(err.Error(), "the cpu controller is not enabled in "+dir+"/cgroup.subtree_control (echo +cpu > it)") {
			t.Errorf("subtree_control %q: error %q does not say how to enable it", tt.text, err)
		}
	}
	if err := checkV2CPU(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no v2 root: %v, want fs.ErrNotExist", err)
	}
}

func TestMkdirCgroup(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "lab")
	for i := range 2 { // made, then reused
		if err := mkdirCgroup(dir); err != nil {
			t.Fatalf("mkdirCgroup #%d: %v", i+1, err)
		}
	}
	if err := mkdirCgroup(filepath.Join(dir, "no", "such")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("mkdirCgroup below a missing parent: %v, want fs.ErrNotExist", err)
	}
}

// TestRemoveTree removes a cgroup and a child made inside it, on plain directories: the
// child's tasks (cgroup.procs, and v1's tasks) go to the parent of the removed cgroup first.
// rmdir then fails only because plain directories keep their files, which a real cgroup's
// interface files do not prevent; the error names the deepest directory.
func TestRemoveTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	parent := filepath.Join(root, "cpu")
	dir := filepath.Join(parent, "lab")
	cgroupFiles(t, parent, "cgroup.procs", "tasks")
	cgroupFiles(t, filepath.Join(dir, "inner"))
	if err := os.WriteFile(filepath.Join(dir, "inner", "cgroup.procs"), []byte("9027\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cgroup{Name: "lab", Version: CgroupV1, Dir: dir, V2Dir: filepath.Join(root, "unified", "lab")}
	err := c.Remove()
	checkErr(t, err, "remove cgroup lab: rmdir "+filepath.Join(dir, "inner")+": directory not empty")
	if got := written(t, parent, "cgroup.procs"); got != "9027" {
		t.Errorf("the inner cgroup's process went to %q in %s, want 9027", got, parent)
	}
	if _, err := os.Stat(filepath.Join(root, "unified")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the v2 twin, never made, is not an error, and nothing is created: %v", err)
	}

	// the same tree once the tasks are out and the files gone: every level is removed
	os.Remove(filepath.Join(dir, "inner", "cgroup.procs"))
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still there: %v", dir, err)
	}

	// a task list that cannot be read stops the removal
	bad := filepath.Join(parent, "bad")
	cgroupFiles(t, bad)
	if err := os.Symlink("cgroup.procs", filepath.Join(bad, "cgroup.procs")); err != nil { // a loop: no read succeeds, even as root
		t.Fatal(err)
	}
	checkErr(t, (&Cgroup{Name: "bad", Dir: bad}).Remove(), "remove cgroup bad: list tasks: open "+filepath.Join(bad, "cgroup.procs")+": too many levels of symbolic links")
	// a parent that takes no tasks: the write's error is returned
	orphan := filepath.Join(root, "orphan", "lab")
	cgroupFiles(t, orphan, "cgroup.procs")
	if err := os.WriteFile(filepath.Join(orphan, "cgroup.procs"), []byte("9027\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkErr(t, (&Cgroup{Name: "lab", Dir: orphan}).Remove(), "write "+filepath.Join(root, "orphan", "cgroup.procs")+": open ")
}

// TestLimitOnTree reads the quotas up a cgroup path laid out like the lab's: the v1 files of
// testdata (the root without a limit, /latscope-td with 0.2 CPU per 100 ms) with a child
// without a quota below, and a v2 path whose root has no cpu.max at all.
func TestLimitOnTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v1, v2 := filepath.Join(root, "cpu"), filepath.Join(root, "unified")
	mounts := []Mount{
		{Root: "/", Point: v1, FSType: "cgroup", SuperOptions: []string{"rw", "cpu"}},
		{Root: "/", Point: v2, FSType: "cgroup2", SuperOptions: []string{"rw"}},
	}
	put := func(dir string, files map[string]string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	td := func(name string) string { return string(readTestdata(t, name)) }
	put(v1, map[string]string{"cpu.cfs_quota_us": td("cfs_quota_us_root.txt"), "cpu.cfs_period_us": td("cfs_period_us_root.txt")})
	put(filepath.Join(v1, "latscope-td"), map[string]string{"cpu.cfs_quota_us": td("cfs_quota_us_lab.txt"), "cpu.cfs_period_us": td("cfs_period_us_lab.txt")})
	put(filepath.Join(v1, "latscope-td", "inner"), map[string]string{"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"})
	put(v2, nil) // the v2 root has no cpu.max
	put(filepath.Join(v2, "a"), map[string]string{"cpu.max": "max 100000\n"})
	put(filepath.Join(v2, "a", "b"), map[string]string{"cpu.max": "150000 100000\n"})
	put(filepath.Join(v2, "a", "b", "c"), map[string]string{"cpu.max": "50000 50000\n"})
	put(filepath.Join(v2, "off"), nil) // no cpu controller: no cpu.max, no limit

	period := 100 * time.Millisecond
	for _, tt := range []struct {
		place Place
		want  Limit
	}{
		{Place{CPU: CgroupV1, CPUPath: "/latscope-td/inner"},
			Limit{Quota: Quota{true, 0.2, period}, Path: "/latscope-td", Own: Quota{Period: period}, CPU: CgroupV1}},
		{Place{CPU: CgroupV1, CPUPath: "/latscope-td"},
			Limit{Quota: Quota{true, 0.2, period}, Path: "/latscope-td", Own: Quota{true, 0.2, period}, CPU: CgroupV1}},
		{Place{CPU: CgroupV1, CPUPath: "/"}, Limit{Own: Quota{Period: period}, CPU: CgroupV1}},
		// the tightest, not the nearest: 1.0 at /a/b/c is tighter than 1.5 at /a/b
		{Place{CPU: CgroupV2, CPUPath: "/a/b/c"},
			Limit{Quota: Quota{true, 1, 50 * time.Millisecond}, Path: "/a/b/c", Own: Quota{true, 1, 50 * time.Millisecond}, CPU: CgroupV2}},
		{Place{CPU: CgroupV2, CPUPath: "/off"}, Limit{CPU: CgroupV2}},
	} {
		got, err := tt.place.Limit(mounts)
		if err != nil || got != tt.want {
			t.Errorf("limit of %v %s: %+v, %v; want %+v", tt.place.CPU, tt.place.CPUPath, got, err, tt.want)
		}
	}

	put(filepath.Join(v2, "bad"), map[string]string{"cpu.max": "max\n"})
	for _, tt := range []struct {
		place Place
		want  string
	}{
		{Place{CPU: CgroupV2, CPUPath: "/gone"}, "read quota: stat " + filepath.Join(v2, "gone") + ": no such file or directory"},
		{Place{CPU: CgroupV2, CPUPath: "/bad"}, "read quota in " + filepath.Join(v2, "bad") + `: parse cpu.max: "max\n" is not "quota period"`},
	} {
		_, err := tt.place.Limit(mounts)
		checkErr(t, err, tt.want)
	}
	_, err := readQuota(v1, NoCgroup)
	checkErr(t, err, "read quota in "+v1+": cgroup version none")
}

// TestLocateGone: a process that is not there (pid -1 never is) has no place and no limit.
func TestLocateGone(t *testing.T) {
	t.Parallel()
	_, err := Locate(-1)
	checkErr(t, err, "locate cgroup: open /proc/-1/cgroup: no such file or directory")
	_, err = ReadLimit(-1)
	checkErr(t, err, "/proc/-1/cgroup")
}

// TestNames: values outside the known sets print as Go would print the number, and the CPU
// sums add user and system time.
func TestNames(t *testing.T) {
	t.Parallel()
	if got := CgroupVersion(7).String(); got != "CgroupVersion(7)" {
		t.Errorf("CgroupVersion(7) = %q", got)
	}
	if got := NumSources.String(); got != "Source(6)" {
		t.Errorf("NumSources = %q", got)
	}
	p := ProcStat{UTime: 310 * time.Millisecond, STime: 20 * time.Millisecond}
	s := Sample{UTime: 310 * time.Millisecond, STime: 20 * time.Millisecond}
	if p.CPU() != 330*time.Millisecond || s.CPU() != 330*time.Millisecond {
		t.Errorf("CPU() = %v, %v; want 330ms", p.CPU(), s.CPU())
	}
	// a tick count past the largest duration saturates instead of wrapping
	if got := ticks(1<<63, DefaultUserHZ); got != 1<<63-1 {
		t.Errorf("ticks(2^63) = %d, want the largest duration", got)
	}
}
