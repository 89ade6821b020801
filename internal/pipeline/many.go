package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// TraceExt is the file name ending of the traces a directory argument
// yields: the agent's snapshots (latscope-….trace) and any other trace
// saved beside them.
const TraceExt = ".trace"

// ManyOptions say how Many analyses each trace and aggregates them.
type ManyOptions struct {
	// Budget and Partial are as in Options, for every trace.
	Budget  budget.Options
	Partial bool
	// Report are the report inputs of every trace; Task and Frame must be
	// empty (Many.Task filters the aggregate).
	Report render.Inputs
	Many   render.ManyOptions
	// afterTrace, when set, is called after each trace is aggregated and
	// its analysis dropped (tests measure the heap there).
	afterTrace func(i int)
}

// Inputs expands the command line's trace arguments: a file stays itself;
// a directory gives its regular files ending in TraceExt, in name order
// (not its subdirectories). A directory without any is an error naming
// it.
func Inputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a) // a missing file is the reader's to report
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("reading directory %s: %w", a, err)
		}
		n := len(out)
		for _, e := range ents { // ReadDir sorts by name
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), TraceExt) && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(a, e.Name()))
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s is a directory, not a trace file, and holds no *%s file", a, TraceExt)
		}
	}
	return out, nil
}

// Many analyses the traces one after another, each by the one-pass
// analysis on its own, and aggregates them by request type (see
// render.ManyBuilder): memory holds one trace's analysis at a time plus
// the aggregate, never all the traces. Each trace's instance is the one
// the agent logged in it (tracelog.Instance), else its file name. An error
// names the trace it came from.
func Many(ctx context.Context, files []string, o ManyOptions) (*render.Many, error) {
	if o.Report.Task != "" || o.Report.Frame != nil {
		return nil, errors.New("pipeline: Many filters by ManyOptions.Many.Task; Report.Task and Report.Frame must be empty")
	}
	b := render.NewManyBuilder(o.Many)
	for i, name := range files {
		src, res, rep, err := oneOfMany(ctx, name, o)
		if err != nil {
			return nil, err
		}
		b.Add(src, res, rep)
		if o.afterTrace != nil {
			o.afterTrace(i)
		}
	}
	return b.Finalize()
}

// oneOfMany analyses one trace of Many and finds its instance.
func oneOfMany(ctx context.Context, name string, o ManyOptions) (render.TraceSource, *budget.Result, *render.Report, error) {
	var il instanceLog
	src := render.TraceSource{File: name}
	res, err := analysis.File(ctx, name, o.Budget, o.Partial, analysis.Use(&il))
	if err != nil {
		return src, nil, nil, err
	}
	in := o.Report
	in.File = name
	rep, err := render.Build(res, in)
	if err != nil {
		return src, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	src.Instance, src.FromLog = il.name, il.name != ""
	if !src.FromLog {
		src.Instance = strings.TrimSuffix(filepath.Base(name), TraceExt)
	}
	if len(il.others) > 0 {
		rep.Findings = append(rep.Findings, render.Finding{Kind: "many-instances", Text: fmt.Sprintf(
			"the trace names more than one instance (%s, %s): it is counted as %s", il.name, strings.Join(il.others, ", "), il.name)})
	}
	return src, res, rep, nil
}

// instanceLog finds the instance the agent logged in a trace: the first
// valid tracelog.Instance log, and up to maxOthers other names.
type instanceLog struct {
	name   string
	others []string
}

const maxOthers = 3

// Event implements analysis.Consumer.
func (c *instanceLog) Event(ev *tracein.Event) {
	if ev.Kind != tracein.KindLog || ev.Name != tracelog.Instance || ev.Message == c.name {
		return
	}
	name, err := tracelog.ParseInstance(ev.Message)
	switch {
	case err != nil:
	case c.name == "":
		c.name = name
	case len(c.others) < maxOthers && !slices.Contains(c.others, name):
		c.others = append(c.others, name)
	}
}

var _ analysis.Consumer = (*instanceLog)(nil)
