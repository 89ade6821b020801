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

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/tracein"
)

// Consumer is another streaming analysis fed by the same read loop (the
// scheduler analysis, say). It is created once the stack table exists.
type Consumer interface{ Event(ev *tracein.Event) }

// NewConsumer creates a Consumer for a trace's stack table.
type NewConsumer func(stacks *tracein.Stacks) Consumer

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
func Reader(ctx context.Context, name string, r io.Reader, opts budget.Options, partial bool, also ...NewConsumer) (*budget.Result, error) {
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		return nil, err
	}
	stacks := tr.Stacks() // only this goroutine touches it (see pipe.go)
	a := budget.New(opts, stacks)
	var extra []Consumer
	for _, mk := range also {
		extra = append(extra, mk(stacks))
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
		for i := range b.recs {
			ev := &b.recs[i]
			a.Event(ev)
			for _, c := range extra {
				c.Event(ev)
			}
		}
		if err := b.err; err != nil {
			if err == io.EOF {
				break
			}
			if !partial {
				return nil, fmt.Errorf("%w (--partial analyses what came before)", err)
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
