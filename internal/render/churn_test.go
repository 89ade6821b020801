package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/sched"
)

// TestChurnSection checks that a JVM recording's churn analysis, added by
// AddChurn, becomes the report's scheduler section: its findings listed,
// its text after the budget, its JSON under "sched". The analysis is
// tested in package sched and with real recordings in package jfr; here
// its report is made by hand.
func TestChurnSection(t *testing.T) {
	tests := []struct {
		name      string
		churn     *sched.JVMReport
		wantKinds []string
	}{
		{"churn", &sched.JVMReport{Samples: 400, Machinery: 100, Share: 0.25, Low: 0.21, High: 0.29}, []string{"sched-overhead"}},
		{"none", &sched.JVMReport{Samples: 400, Machinery: 20, Share: 0.05, Low: 0.03, High: 0.08}, nil},
		{"few samples", &sched.JVMReport{Samples: 12, Machinery: 3, Share: 0.25, Low: 0.09, High: 0.53}, []string{"few-cpu-samples"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := tt.churn
			cr.Thresholds = churn.DefaultThresholds
			res := &budget.Result{Info: budget.TraceInfo{JVM: true, End: 1e9}}
			rep, err := Build(res, Inputs{File: "rec.jfr", CPUSeconds: -1})
			if err != nil {
				t.Fatal(err)
			}
			AddChurn(rep, cr)
			var kinds []string
			for _, f := range rep.Findings {
				kinds = append(kinds, f.Kind)
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.wantKinds) {
				t.Errorf("finding kinds %v, want %v", kinds, tt.wantKinds)
			}
			var text, section bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := WriteChurnText(&section, cr); err != nil {
				t.Fatal(err)
			}
			out := text.String()
			i := strings.Index(out, "scheduler churn (the JVM's pool threads")
			if i < 0 || !strings.HasPrefix(section.String(), cr.Verdict()+"\n") || !strings.HasSuffix(out, "\n"+section.String()) {
				t.Errorf("no churn section in:\n%s", out)
			}
			if j := strings.Index(out, "findings:"); len(tt.wantKinds) > 0 && (j < 0 || j > i) {
				t.Errorf("findings should come before the churn section:\n%s", out)
			}
			var js struct {
				Sched struct{ Kind string } `json:"sched"`
			}
			var b bytes.Buffer
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b.Bytes(), &js); err != nil || js.Sched.Kind != "jvm-churn" {
				t.Errorf("JSON sched.kind = %q (%v), want jvm-churn", js.Sched.Kind, err)
			}
		})
	}
}
