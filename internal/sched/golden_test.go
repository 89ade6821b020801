package sched_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	goldenfile "github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/sched/schedtest"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
)

var update = flag.Bool("update", false, "rewrite the golden files and the fuzz seed")

// TestGolden renders a synthetic profile's report as JSON (its text is
// internal/render's sched-profile.txt).
func TestGolden(t *testing.T) {
	limit := hostsig.Limit{
		Quota: hostsig.Quota{Limited: true, CPUs: 1.5, Period: 100_000_000}, Path: "/lab",
		Own: hostsig.NoLimit, CPU: hostsig.CgroupV2,
	}
	rep, err := sched.FromProfile(schedtest.SyntheticProfile(), sched.Options{Host: sched.Host{GOMAXPROCS: 8, NumCPU: 8, Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile.json", append(js, '\n'))
	var buf bytes.Buffer
	if err := schedtest.SyntheticProfile().Write(&buf); err != nil {
		t.Fatal(err)
	}
	seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", buf.Bytes())
	golden(t, filepath.Join("fuzz", "FuzzFromProfile", "synthetic"), []byte(seed))
}

// golden compares got with testdata/name; -update rewrites it. A mismatch
// writes name.got beside it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

// FuzzFromProfile: no profile, however malformed, makes the analysis panic.
func FuzzFromProfile(f *testing.F) {
	var buf bytes.Buffer
	if err := schedtest.SyntheticProfile().Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte("not a profile"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		rep, err := sched.FromProfile(p, sched.Options{})
		if err != nil {
			return
		}
		rep.Findings()
		if _, err := json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
	})
}
