package render_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/sched/schedtest"
)

// TestSchedGolden prints the scheduler report of a synthetic profile (the
// one internal/sched's golden JSON is made from) and compares it with
// testdata/sched-profile.txt.
func TestSchedGolden(t *testing.T) {
	rep := syntheticSched(t)
	var text bytes.Buffer
	if err := render.WriteSchedText(&text, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sched-profile.txt"), text.Bytes(), *update)
}

// TestWriteSched: the section under analyze's report has its heading and
// the report's text, and is left out when there are no CPU samples.
func TestWriteSched(t *testing.T) {
	rep := syntheticSched(t)
	var section, text bytes.Buffer
	if err := render.WriteSched(&section, rep); err != nil {
		t.Fatal(err)
	}
	if err := render.WriteSchedText(&text, rep); err != nil {
		t.Fatal(err)
	}
	want := "\nscheduler and runtime overhead (from CPU samples):\n" + strings.TrimRight(text.String(), "\n") + "\n"
	if section.String() != want {
		t.Errorf("section:\n%s\nwant:\n%s", section.String(), want)
	}
	for _, s := range []*sched.Report{nil, {}} {
		var b bytes.Buffer
		if err := render.WriteSched(&b, s); err != nil || b.Len() > 0 {
			t.Errorf("WriteSched(%v) = %q, %v; want nothing", s, b.String(), err)
		}
	}
}

func syntheticSched(t *testing.T) *sched.Report {
	t.Helper()
	limit := hostsig.Limit{
		Quota: hostsig.Quota{Limited: true, CPUs: 1.5, Period: 100_000_000}, Path: "/lab",
		Own: hostsig.NoLimit, CPU: hostsig.CgroupV2,
	}
	rep, err := sched.FromProfile(schedtest.SyntheticProfile(), sched.Options{Host: sched.Host{GOMAXPROCS: 8, NumCPU: 8, Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
