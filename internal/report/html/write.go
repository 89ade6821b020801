package htmlreport

import (
	"errors"
	"fmt"
	"github.com/latscope/latscope/internal/opterr"
	"io"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
)

// Write writes the HTML report of one analysis: NewPage, Analysis, then
// opts.Sections and the findings. res supplies per-request latencies for the
// histogram; it may be nil (the histogram is then left out).
func Write(w io.Writer, rep *render.Report, res *budget.Result, opts Options) error {
	p, err := Build(rep, res, opts)
	if err != nil {
		return err
	}
	return p.Write(w)
}

// WriteFile writes the report to path atomically (temporary file, rename).
func WriteFile(path string, rep *render.Report, res *budget.Result, opts Options) error {
	p, err := Build(rep, res, opts)
	if err != nil {
		return opterr.Wrap("html", fmt.Errorf("%s: %w", path, err))
	}
	return p.WriteFile(path)
}

// Build assembles the page Write writes, for callers that add to it.
func Build(rep *render.Report, res *budget.Result, opts Options) (*Page, error) {
	if rep == nil {
		return nil, errors.New("html report: no report")
	}
	p := NewPage(rep, opts)
	secs, err := Analysis(rep, res, opts)
	if err != nil {
		return nil, err
	}
	p.Add(secs...)
	p.Add(opts.Sections...)
	p.Add(FindingsSection(rep))
	return p, nil
}

// NewPage returns a page whose header describes the trace and the first
// request type's latency.
func NewPage(rep *render.Report, opts Options) *Page {
	t := rep.Trace
	p := &Page{Title: opts.Title}
	if p.Title == "" {
		name := filepath.Base(t.File)
		if t.File == "" || t.File == "-" {
			name = "standard input"
		}
		p.Title = "latscope — " + name
	}
	parts := []string{fmt.Sprintf("%s of trace", fmtMs(t.Duration.Ms())), fmt.Sprintf("%d goroutines", t.Goroutines),
		fmt.Sprintf("GOMAXPROCS %d (%s busy)", t.GOMAXPROCS, fmtPct(t.ProcBusyPct)), fmt.Sprintf("%d CPU samples", t.CPUSamples)}
	if t.JVM {
		if p.Footer == "" {
			p.Footer = "latscope — where a request's wall-clock latency went. Values come from one JDK Flight Recorder recording; hover a bar for its numbers."
		}
		parts = []string{fmt.Sprintf("%s of recording", fmtMs(t.Duration.Ms())), fmt.Sprintf("%d threads", t.Goroutines),
			fmt.Sprintf("%d hardware threads (%s busy)", t.GOMAXPROCS, fmtPct(t.ProcBusyPct)), fmt.Sprintf("%d execution samples", t.CPUSamples)}
	}
	if t.StartWall != "" {
		parts = append(parts, "recorded "+t.StartWall)
	}
	p.Subtitle = strings.Join(parts, " · ")
	if len(rep.Groups) == 0 {
		return p
	}
	g := rep.Groups[0]
	q := g.Requests
	kind := "requests"
	if len(rep.Groups) > 1 {
		kind = g.Name
	}
	p.Facts = []Fact{{kind, fmt.Sprintf("%d", q.Count)}, {"throughput", fmt.Sprintf("%.1f/s", q.RPS)},
		{"mean", fmtMs(q.Mean.Ms())}, {"p50", fmtMs(q.P50.Ms())}, {"p90", fmtMs(q.P90.Ms())}, {"p99", fmtMs(q.P99.Ms())}, {"max", fmtMs(q.Max.Ms())}}
	if t.JVM {
		if q.Mean == 0 {
			p.Facts = append(p.Facts[:2], Fact{"latency", "not measured"})
		}
		return p // no critical-path walk in a recording
	}
	if c := g.Coverage; q.Count > 0 {
		p.Facts = append(p.Facts, Fact{"critical path covers", fmtPct(c.CriticalPct)})
	}
	return p
}
