package htmlreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/render"
)

// TestBuildMany: the page of several traces shows each request type's
// instances and every trace, with the text escaped.
func TestBuildMany(t *testing.T) {
	m := &render.Many{
		Instances: []string{"web-a", "<b>web-b</b>"},
		Traces: []render.ManyTrace{
			{File: "a.trace", Instance: "web-a", InstanceFrom: "log", Duration: 1e9, Requests: 10},
			{File: "b.trace", Instance: "<b>web-b</b>", InstanceFrom: "file", Duration: 2e9, Requests: 20,
				Findings: []render.Finding{{Kind: "warm-up", Text: "warm-up in the window"}}},
		},
		Groups: []render.ManyGroup{{Name: "GET /work", Requests: render.ManyRequests{Count: 30, Mean: 4e6, P99: 6e6, Max: 7e6},
			Terms: []render.Term{{Name: "handler", Frame: "main.handler", Kind: "sleep", Wait: 4e6, SharePct: 100, Critical: 4e6, CriticalPct: 100, Requests: 30}},
			Instances: []render.InstanceRow{{Instance: "web-a", Traces: 1, Requests: 10, Mean: 2e6, TopTerm: "handler", TopCritical: 2e6},
				{Instance: "<b>web-b</b>", Traces: 1, Requests: 20, Mean: 5e6, TopTerm: "handler", TopCritical: 5e6}}}},
		Findings: []render.Finding{{Kind: "instance-from-file", Text: "1 of 2 traces hold no instance log"}},
	}
	p, err := BuildMany(m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"2 traces from 2 instances", "GET /work", "web-a", "&lt;b&gt;web-b&lt;/b&gt;", "warm-up in the window", "instance-from-file", "b.trace"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>web-b</b>") {
		t.Error("an instance name is not escaped")
	}
	if _, err := BuildMany(nil); err == nil {
		t.Error("BuildMany(nil): want an error")
	}
}
