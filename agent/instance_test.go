package agent

import (
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/agent/internal/tier"
	"github.com/latscope/latscope/tracelog"
)

// TestAgentInstanceLog runs real agents under a real trace: the instance
// name is logged with every module log, outside any task; "-" logs none.
func TestAgentInstanceLog(t *testing.T) {
	tier.Timing(t)
	const run = time.Second // module logs at about 0 and 500 ms, and maybe 1000
	tests := []struct {
		name string
		o    Options
		want string // "" for no instance log
	}{
		{"Options.Instance", Options{Module: "example.com/svc", Instance: "web-1"}, "web-1"},
		{"none", Options{Module: "example.com/svc", Instance: "-"}, ""},
		{"no recorder", Options{Module: "example.com/svc", Instance: "web-3", NoRecorder: true}, "web-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := traceAgent(t, tt.o, run)
			mods := logs(evs, tracelog.Module)
			insts := logs(evs, tracelog.Instance)
			if tt.want == "" {
				if len(insts) != 0 {
					t.Errorf("%d instance logs, want none", len(insts))
				}
				return
			}
			if len(insts) != len(mods) || len(insts) < 2 {
				t.Fatalf("%d instance logs and %d module logs, want as many, at least 2", len(insts), len(mods))
			}
			for i, ev := range insts {
				if ev.Message != tt.want || ev.Task != agenttest.BackgroundTask {
					t.Errorf("instance log %d: %q in task %d, want %q outside any task", i, ev.Message, ev.Task, tt.want)
				}
				if gap := time.Duration(ev.Time - mods[i].Time); gap < 0 || gap > tracelog.ModuleEvery/2 {
					t.Errorf("instance log %d is %v after its module log, want right after it", i, gap)
				}
			}
		})
	}
}

// TestSamplerInstance: the instance logged is Options.Instance cleaned,
// the host name by default, none for "-".
func TestSamplerInstance(t *testing.T) {
	tests := []struct{ in, want string }{
		{"web-1", "web-1"},
		{" web\t2 ", "web?2"},
		{"", tracelog.DefaultInstance()},
		{"-", ""},
	}
	for _, tt := range tests {
		s := newSampler("example.com/svc", tt.in, 100*time.Millisecond)
		s.close()
		if s.instance != tt.want {
			t.Errorf("Instance %q: logs %q, want %q", tt.in, s.instance, tt.want)
		}
	}
}
