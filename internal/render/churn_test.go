package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/sched"
)

// fakeChurn stands for jfr.ChurnReport (tested with real recordings in
// package jfr).
type fakeChurn struct{ findings []sched.Finding }

func (f *fakeChurn) Error() string { return "scheduler churn: pool machinery took 25 %" }
func (f *fakeChurn) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\n  details\n", f.Error())
	return err
}
func (f *fakeChurn) Findings() []sched.Finding    { return f.findings }
func (f *fakeChurn) MarshalJSON() ([]byte, error) { return []byte(`{"kind":"jvm-churn"}`), nil }

// TestChurnSection checks that a JVM recording's churn analysis, carried in
// the result's warnings, becomes the report's scheduler section: its
// findings listed, its text after the budget, its JSON under "sched".
func TestChurnSection(t *testing.T) {
	tests := []struct {
		name      string
		findings  []sched.Finding
		wantKinds []string
	}{
		{"churn", []sched.Finding{{Kind: sched.FindSchedOverhead, Text: "pool machinery took 25 %", Options: []string{"batching"}}}, []string{"sched-overhead"}},
		{"none", nil, nil},
		{"few samples", []sched.Finding{{Kind: sched.FindFewSamples, Text: "only 12 execution samples"}}, []string{"few-cpu-samples"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &budget.Result{Info: budget.TraceInfo{JVM: true, End: 1e9}, Warnings: []error{&fakeChurn{findings: tt.findings}}}
			rep, err := Build(res, Inputs{File: "rec.jfr", CPUSeconds: -1})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, f := range rep.Findings {
				kinds = append(kinds, f.Kind)
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.wantKinds) {
				t.Errorf("finding kinds %v, want %v", kinds, tt.wantKinds)
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			out := text.String()
			i := strings.Index(out, "scheduler churn (the JVM's pool threads")
			if i < 0 || !strings.Contains(out[i:], "scheduler churn: pool machinery took 25 %\n  details") {
				t.Errorf("no churn section in:\n%s", out)
			}
			if j := strings.Index(out, "findings:"); len(tt.findings) > 0 && (j < 0 || j > i) {
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
