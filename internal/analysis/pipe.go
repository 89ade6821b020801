package analysis

import (
	"context"
	"io"

	"github.com/latscope/latscope/internal/tracein"
	"golang.org/x/exp/trace"
)

// The read loop runs in two stages: a goroutine decodes the trace
// (tracein.Reader.ReadRaw), the caller's goroutine interns the records'
// stacks (tracein.Stacks.Resolve, so the stack table has one owner) and
// analyses them. Batches travel from one stage to the other and back, so on
// a machine with more than one core the stages overlap and the analysis
// costs little more wall time than decoding alone.
//
// Converting events into records (tracein.Converter) is done by whichever
// stage has time for it: the decoder converts a batch when the analysis is
// behind (half the batches in flight are waiting for it), and leaves it to
// the analysis otherwise. The two stages so balance themselves, whatever
// the trace and the machine. (A third goroutine just for conversion was
// slower on two cores. The decoder converting whenever one batch waited
// cost more CPU — the records, twice the events' size, then cross from
// one core to the other — and more wall time: converting behind aheadBy
// is the best of 1, 2, 4, 6 and never in interleaved runs on 100 MiB.)

// batchLen is the number of events in one batch: large enough that the
// hand-over costs nothing per event, small enough to stay in cache.
const batchLen = 1024

// batches in flight: the decoder can run this many batches ahead.
const batches = 8

// aheadBy is how many batches must wait for the analysis before the
// decoder converts one itself.
const aheadBy = batches / 2

type batch struct {
	raw       []trace.Event   // decoded events
	recs      []tracein.Event // their records once converted, stacks not yet interned
	converted bool
	err       error // the reader's error after the events (io.EOF at the end)
	offset    int64 // the input's offset after the events
}

// pipe is the decoding stage.
type pipe struct {
	name        string
	empty, full chan *batch
	done        chan struct{}
	// the converters of the decoding stage and of the analysis: each
	// keeps what it learned of the trace's event types
	decConv, anaConv tracein.Converter
}

// startPipe starts decoding tr on a new goroutine; name is used in errors.
func startPipe(name string, tr *tracein.Reader) *pipe {
	p := &pipe{name: name, empty: make(chan *batch, batches), full: make(chan *batch, batches), done: make(chan struct{})}
	for range batches {
		p.empty <- &batch{raw: make([]trace.Event, batchLen), recs: make([]tracein.Event, batchLen)}
	}
	go p.decode(tr)
	return p
}

// decode fills batches until the trace ends, fails, or stop is called.
func (p *pipe) decode(tr *tracein.Reader) {
	for {
		var b *batch
		select {
		case b = <-p.empty:
		case <-p.done:
			return
		}
		n, err := tr.ReadRaw(b.raw[:cap(b.raw)])
		clear(b.raw[n:cap(b.raw)]) // hold no decoded generation in the part not refilled
		b.raw, b.err, b.offset = b.raw[:n], err, tr.Offset()
		if len(p.full) >= aheadBy { // the analysis is behind: convert here
			p.convert(&p.decConv, b)
		}
		select {
		case p.full <- b:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// convert turns b's events into records, once, with c, the calling
// stage's converter.
func (p *pipe) convert(c *tracein.Converter, b *batch) {
	if b.converted {
		return
	}
	n, err := c.Convert(p.name, b.raw, b.recs[:cap(b.recs)])
	b.recs, b.converted = b.recs[:n], true
	if err != nil && (b.err == nil || b.err == io.EOF) { // a conversion failure comes first
		b.err = err
	}
}

// next returns the next batch, converted, or the context's error.
func (p *pipe) next(ctx context.Context) (*batch, error) {
	select {
	case b := <-p.full:
		p.convert(&p.anaConv, b)
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// recycle gives a consumed batch back to the decoder. Its events keep
// their generation's tables alive until the decoder refills it, which it
// does as soon as it has a batch to fill: clearing them here cost the
// analysis, the busier stage, a pass over 1,024 events per batch.
func (p *pipe) recycle(b *batch) {
	b.raw, b.recs, b.converted, b.err = b.raw[:0], b.recs[:0], false, nil
	p.empty <- b
}

// stop ends the decoder if it is still running.
func (p *pipe) stop() { close(p.done) }
