package hostsig

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the parsers' output")

// goldenParsers maps a prefix of a testdata file name (real files copied from the project
// VM) to the parser for it.
var goldenParsers = []struct {
	prefix string
	parse  func([]byte) (any, error)
}{
	{"proc_pid_stat_", func(b []byte) (any, error) { return ParseProcStat(b, DefaultUserHZ) }},
	{"schedstat_", func(b []byte) (any, error) { return ParseSchedstat(b) }},
	{"proc_stat", func(b []byte) (any, error) { return ParseSystemStat(b, DefaultUserHZ) }},
	{"pressure_", func(b []byte) (any, error) { return ParsePSI(b) }},
	{"cpu_pressure_", func(b []byte) (any, error) { return ParsePSI(b) }},
	{"cpu_stat_v1_", func(b []byte) (any, error) { return ParseCPUStat(b, CgroupV1) }},
	{"cpu_stat_v2_", func(b []byte) (any, error) { return ParseCPUStat(b, CgroupV2) }},
	{"proc_pid_cgroup_", func(b []byte) (any, error) { return ParseProcCgroup(b) }},
	{"mountinfo", func(b []byte) (any, error) { return ParseMountinfo(b) }},
	{"auxv", func(b []byte) (any, error) { return ParseAuxvClockTick(b) }},
	{"cfs_quota_us_", nil}, // with cfs_period_us_ of the same suffix: readQuotaPair
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.*")
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, file := range files {
		base := filepath.Base(file)
		for _, p := range goldenParsers {
			if !strings.HasPrefix(base, p.prefix) {
				continue
			}
			used++
			t.Run(base, func(t *testing.T) {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				var v any
				if p.prefix == "cfs_quota_us_" {
					v, err = readQuotaPair(file, b)
				} else {
					v, err = p.parse(b)
				}
				if err != nil {
					t.Fatalf("real file does not parse: %v", err)
				}
				checkGolden(t, filepath.Join("testdata", "golden", base+".golden"), dump(v))
			})
		}
	}
	if used < 15 {
		t.Errorf("only %d testdata files matched a parser", used)
	}
}

func readQuotaPair(file string, quota []byte) (any, error) {
	period, err := os.ReadFile(strings.Replace(file, "cfs_quota_us_", "cfs_period_us_", 1))
	if err != nil {
		return nil, err
	}
	return ParseCFSQuota(quota, period)
}

func dump(v any) string {
	if ms, ok := v.([]Mount); ok {
		var b strings.Builder
		for _, m := range ms {
			fmt.Fprintf(&b, "%+v\n", m)
		}
		return b.String()
	}
	return fmt.Sprintf("%+v\n", v)
}

// checkGolden compares got with the golden file, rewriting it with -update. On a mismatch
// it writes got next to it as .got and fails. (The main module's internal/golden does
// this for its packages, with a diff; this module cannot import it, and takes no
// dependency for the diff.)
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal([]byte(got), want) {
		os.Remove(path + ".got")
		return
	}
	os.WriteFile(path+".got", []byte(got), 0o644)
	t.Errorf("output differs from %s: diff %s %s.got (go test -update accepts it)", path, path, path)
}
