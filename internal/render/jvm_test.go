package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
)

// TestJVMJSON checks that a JVM recording's JSON writes what the recording
// cannot give as null with a reason, not 0: running and runnable always,
// latencies and shares of the mean when no load results gave latencies.
func TestJVMJSON(t *testing.T) {
	tests := []struct {
		name      string
		jvm       bool
		latencies []int64
		wantNull  []string // paths whose value must be null
		wantValue []string // paths whose value must not be null
	}{
		{"jvm without latencies", true, nil,
			[]string{"requests.mean_ms", "requests.p99_ms", "cpu.running_ms", "cpu.runnable_ms", "cpu.critical_running_ms", "coverage.critical_pct", "terms.0.share_pct", "groups.0.cpu.runnable_ms", "groups.0.requests.p50_ms"},
			[]string{"requests.count", "terms.0.wait_ms", "requests.not_measured", "cpu.not_measured"}},
		{"jvm with latencies", true, []int64{10e6, 20e6},
			[]string{"cpu.running_ms", "groups.0.cpu.runnable_ms"},
			[]string{"requests.mean_ms", "terms.0.share_pct", "coverage.critical_pct", "cpu.not_measured"}},
		{"go", false, []int64{10e6, 20e6}, nil,
			[]string{"requests.mean_ms", "cpu.running_ms", "terms.0.share_pct"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &budget.Group{Name: "Probe.handle", Count: 2, Latencies: tt.latencies, Latency: budget.StatsOf(tt.latencies),
				Terms: []budget.TermStat{{Term: 0, Wait: 5e6, Critical: 5e6, Fix: 5e6, Requests: 2}}}
			res := &budget.Result{Info: budget.TraceInfo{JVM: tt.jvm, End: 4e9}, Terms: []budget.Term{{Frame: "Probe.callUpstream", Mechanism: "java.net.SocketInputStream.read", Kind: frame.Network}},
				Groups: []*budget.Group{g}}
			rep, err := Build(res, Inputs{File: "rec", CPUSeconds: -1})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.wantNull {
				if v, ok := lookup(doc, p); !ok || v != nil {
					t.Errorf("%s = %v (present %v), want null", p, v, ok)
				}
			}
			for _, p := range tt.wantValue {
				if v, ok := lookup(doc, p); !ok || v == nil {
					t.Errorf("%s is null or absent, want a value", p)
				}
			}
		})
	}
}

// lookup follows a dotted path ("terms.0.share_pct") through decoded JSON.
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, k := range bytes.Split([]byte(path), []byte(".")) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[string(k)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i := int(k[0] - '0')
			if i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
