package pipeline

import (
	"io"

	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// addSchedFindings adds the scheduler findings, the report and the
// warnings about the --cpu profile to the analysis report.
func addSchedFindings(rep *render.Report, s *sched.Report, warns []string) {
	for _, w := range warns {
		rep.Findings = append(rep.Findings, render.Finding{Kind: "cpu-profile-mismatch", Text: w})
	}
	if s == nil {
		return
	}
	rep.Sched = s
	for _, f := range s.Findings() {
		kind := f.Kind.String()
		if kind == "no-cpu-samples" {
			continue // said once in the scheduler section
		}
		rep.Findings = append(rep.Findings, render.Finding{Kind: kind, Text: f.Error()})
	}
}

// writeSchedText prints the scheduler section under the report
// (render.WriteSched: with its heading, when there is CPU data).
func writeSchedText(w io.Writer, s *sched.Report) error { return render.WriteSched(w, s) }
