package analysis

import (
	"context"

	"github.com/latscope/latscope/tracein"
)

// The read loop runs in two stages: a goroutine decodes the trace and
// converts its events into records (tracein.Reader.FillRaw), the caller's
// goroutine interns the records' stacks (tracein.Stacks.Resolve, so the
// stack table has one owner) and analyses them. Batches of records travel
// from one stage to the other and back, so on a machine with more than one
// core the stages overlap and the analysis costs little more wall time than
// decoding alone. (A third stage, converting apart from decoding, was
// slower on two cores: three busy goroutines on two Ps switch too often.)

// batchLen is the number of records in one batch: large enough that the
// hand-over costs nothing per record, small enough to stay in cache.
const batchLen = 1024

// batches in flight: the decoder can run this many batches ahead.
const batches = 8

type batch struct {
	recs []tracein.Event // stacks not yet interned
	err  error           // the reader's error after the records (io.EOF at the end)
}

// pipe is the decoding stage.
type pipe struct {
	empty, full chan *batch
	done        chan struct{}
}

// startPipe starts decoding tr on a new goroutine.
func startPipe(tr *tracein.Reader) *pipe {
	p := &pipe{empty: make(chan *batch, batches), full: make(chan *batch, batches), done: make(chan struct{})}
	for range batches {
		p.empty <- &batch{recs: make([]tracein.Event, batchLen)}
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
		n, err := tr.FillRaw(b.recs[:cap(b.recs)])
		b.recs, b.err = b.recs[:n], err
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

// next returns the next batch, or the context's error.
func (p *pipe) next(ctx context.Context) (*batch, error) {
	select {
	case b := <-p.full:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// recycle gives a consumed batch back to the decoder.
func (p *pipe) recycle(b *batch) {
	b.recs, b.err = b.recs[:0], nil
	p.empty <- b
}

// stop ends the decoder if it is still running.
func (p *pipe) stop() { close(p.done) }
