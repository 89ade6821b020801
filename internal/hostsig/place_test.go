package hostsig

import (
	"os"
	"testing"
)

// TestLocateIn resolves the real /proc/PID/cgroup files against the real mountinfo.
func TestLocateIn(t *testing.T) {
	mb, err := os.ReadFile("testdata/mountinfo.txt")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := ParseMountinfo(mb)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		want Place
		lvls int
	}{
		{"testdata/proc_pid_cgroup_lab.txt", Place{CgroupV1, "/latscope-td", "/sys/fs/cgroup/cpu/latscope-td", "/latscope-td", "/sys/fs/cgroup/unified/latscope-td"}, 2},
		{"testdata/proc_pid_cgroup_root.txt", Place{CgroupV1, "/", "/sys/fs/cgroup/cpu", "/", "/sys/fs/cgroup/unified"}, 1},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := ParseProcCgroup(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LocateIn(pc, mounts)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.file, got, tt.want)
		}
		if l := got.Levels(mounts); len(l) != tt.lvls || l[len(l)-1].Path != "/" {
			t.Errorf("%s: levels %+v, want %d ending at the root", tt.file, l, tt.lvls)
		}
	}
	v2only := []Mount{{Root: "/", Point: "/sys/fs/cgroup", FSType: "cgroup2"}}
	got, err := LocateIn(ProcCgroup{V1CPU: "", V2: "/a/b"}, v2only)
	if err != nil || got.CPU != CgroupV2 || got.CPUDir != "/sys/fs/cgroup/a/b" {
		t.Errorf("v2-only host: %+v, %v", got, err)
	}
	if _, err := LocateIn(ProcCgroup{V1CPU: "/x"}, v2only); err == nil {
		t.Errorf("v1 cpu line without a v1 mount: no error")
	}
}

// TestLocateSelf checks that this process is found where /proc says.
func TestLocateSelf(t *testing.T) {
	p, err := Locate(os.Getpid())
	if err != nil {
		t.Skipf("SKIP: no cgroup hierarchy with the cpu controller here: %v", err)
	}
	if _, err := os.Stat(p.CPUDir); err != nil {
		t.Errorf("cpu cgroup directory %s: %v", p.CPUDir, err)
	}
	if _, err := ReadLimit(os.Getpid()); err != nil {
		t.Errorf("ReadLimit: %v", err)
	}
}
