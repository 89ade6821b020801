// Package analysis runs the streaming analyser over a trace file: the read
// loop that the CLI, the lab and tests share. The analysis itself is
// package budget; this package only owns the I/O.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/frame"
	"github.com/latscope/latscope/tracelog"
	"github.com/latscope/latscope/tracein"
)

// Consumer is another streaming analysis fed by the same read loop (the
// scheduler analysis, say). It is created once the stack table exists.
type Consumer interface{ Event(ev *tracein.Event) }

// NewConsumer creates a Consumer for a trace's stack table, with the rules
// that decide application frames (the caller's, or with the main module
// the trace names: see Reader).
type NewConsumer func(stacks *tracein.Stacks, rules frame.Rules) Consumer

// File analyses the trace in the named file ("-" reads standard input).
// With partial, a damaged trace is analysed up to the damage and a finding
// says so; otherwise the damage is an error naming the offset. Each of also
// sees every record too.
func File(ctx context.Context, name string, opts budget.Options, partial bool, also ...NewConsumer) (*budget.Result, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, &tracein.Error{Name: name, Offset: -1, Msg: "is a directory, not a trace file"}
		}
		r = f
	}
	return Reader(ctx, name, r, opts, partial, also...)
}

// Reader analyses a trace read from r; name is used in errors.
//
// When the caller names neither the application (Rules.App) nor the main
// module (Rules.Module), the main module comes from the trace: the agent
// logs it (tracelog.Module) every tracelog.ModuleEvery, so the records of
// the trace's first tracelog.ModuleLookahead are held until its log is
// found, and the analysers are created with it, before any of them sees a
// stack. A trace without the log is analysed by the default rules.
func Reader(ctx context.Context, name string, r io.Reader, opts budget.Options, partial bool, also ...NewConsumer) (*budget.Result, error) {
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		return nil, err
	}
	stacks := tr.Stacks() // only this goroutine touches it (see pipe.go)
	var a *budget.Analyzer
	var extra []Consumer
	start := func() {
		a = budget.New(opts, stacks)
		for _, mk := range also {
			extra = append(extra, mk(stacks, opts.Rules))
		}
	}
	look := lookahead{on: opts.Rules.Module == "" && len(opts.Rules.App) == 0}
	if !look.on {
		start()
	}
	feed := func(recs []tracein.Event) {
		for i := range recs {
			ev := &recs[i]
			a.Event(ev)
			for _, c := range extra {
				c.Event(ev)
			}
		}
	}
	p := startPipe(name, tr)
	defer p.stop()
	var lost error
	for {
		b, err := p.next(ctx)
		if err != nil {
			return nil, err
		}
		if n, err := stacks.Resolve(b.recs); err != nil { // a damaged stack table: analyse the records before its first use
			b.recs, b.err = b.recs[:n], err
		}
		var te *tracein.Error
		if errors.As(b.err, &te) && te.Offset < 0 { // resolving and converting know no offset: the batch's
			te.Offset = b.offset
		}
		if look.on {
			if mod, done := look.add(b.recs, b.err != nil); done {
				opts.Rules.Module = mod
				start()
				feed(look.held)
				look = lookahead{}
			}
		} else {
			feed(b.recs)
		}
		if err := b.err; err != nil {
			if err == io.EOF {
				break
			}
			if !partial {
				return nil, &DamagedError{Err: err}
			}
			lost = err
			break
		}
		p.recycle(b)
	}
	res := a.Finalize()
	if lost != nil {
		res.Warnings = append(res.Warnings, &budget.Finding{Kind: budget.FindCutByWindow, Text: fmt.Sprintf("the trace is damaged; analysed %d records before: %v; requests open at that point are excluded", res.Info.Records, lost)})
	}
	return res, nil
}

// maxHeld bounds the records held while looking for the main module.
const maxHeld = 1 << 18

// lookahead holds the first records of a trace while it looks for the
// agent's main-module log.
type lookahead struct {
	on      bool
	held    []tracein.Event
	first   tracein.Time
	started bool
}

// add holds recs (copied: the batch is recycled) and reports whether the
// search is over, with the module found ("" when none): a log was found,
// the records span tracein.ModuleLookahead, too many are held, or the
// trace ended (last).
func (l *lookahead) add(recs []tracein.Event, last bool) (string, bool) {
	l.held = append(l.held, recs...)
	for i := range recs {
		ev := &recs[i]
		if !l.started {
			l.first, l.started = ev.Time, true
		}
		if time.Duration(ev.Time-l.first) >= tracelog.ModuleLookahead {
			return "", true // not in the window every agent's trace has it in
		}
		if ev.Kind == tracein.KindLog && ev.Name == tracelog.Module {
			if mod := strings.TrimSpace(ev.Message); mod != "" && !strings.ContainsAny(mod, " \t\n") {
				return mod, true
			}
		}
	}
	return "", last || len(l.held) >= maxHeld
}

// DamagedError is returned when the trace breaks off after records that
// could be read and a partial analysis was not asked for: analysing with
// partial set would read what came before the damage.
type DamagedError struct{ Err error }

// Error returns the reader's error.
func (e *DamagedError) Error() string { return e.Err.Error() }

// Unwrap returns the reader's error.
func (e *DamagedError) Unwrap() error { return e.Err }
