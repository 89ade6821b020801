package tcpproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/tracelog"
)

// chunk is one read from the upstream and when it may be written.
type chunk struct {
	data []byte
	due  time.Time
	log  *chunkLog // with Options.Log only, so that a queue slot grows by one pointer
}

// chunkLog is what a logged chunk carries to its write: it was read at
// due − delay.
type chunkLog struct {
	delay time.Duration
	tp    tracelog.TraceParent
}

// serve connects client c, the proxy's id-th connection, to the upstream
// until either side is done.
func (p *Proxy) serve(c net.Conn, id int64) {
	defer p.wg.Done()
	if !p.track(c) {
		c.Close()
		return
	}
	defer p.untrack(c)
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	up, err := d.DialContext(p.ctx, "tcp", p.opts.To)
	if err != nil {
		if p.ctx.Err() != nil {
			return // closing: not a failure of the upstream
		}
		p.failed.Add(1)
		if p.opts.DialFailed != nil {
			p.opts.DialFailed(err)
		}
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	var lc *connLog
	if p.opts.Log != nil {
		lc = &connLog{id: id, log: p.opts.Log, clock: p.clock}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		copyCounting(up, c, &p.toUpstream, lc)
		closeWrite(up)
	}()
	go func() {
		defer wg.Done()
		p.delayLine(c, up, lc)
		closeWrite(c)
	}()
	wg.Wait()
}

// copyCounting copies src to dst, adding the bytes written to n. With lc,
// each chunk is scanned for a traceparent before it is written on, and
// logged.
func copyCounting(dst io.Writer, src io.Reader, n *atomic.Int64, lc *connLog) {
	buf := make([]byte, chunkSize)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			var read time.Time
			var tp tracelog.TraceParent
			if lc != nil {
				read = time.Now()
				tp = lc.clientChunk(buf[:k])
			}
			w, werr := dst.Write(buf[:k])
			n.Add(int64(w))
			if lc != nil && w > 0 {
				lc.emit(ToServer, tp, read, time.Now(), w, 0)
			}
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// delayLine reads chunks from src and writes each to dst once its delay has
// passed: a reader stamps them, a writer waits for each stamp in order. When
// src ends, the chunks already read are still written. With lc, each chunk
// is stamped when read and logged once written.
func (p *Proxy) delayLine(dst, src net.Conn, lc *connLog) {
	queue := make(chan chunk, p.opts.MaxQueued)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.writeDue(dst, queue, lc)
		src.Close() // the client is gone: stop reading the upstream
	}()
	for {
		buf := make([]byte, chunkSize)
		k, err := src.Read(buf)
		if k > 0 {
			p.chunks.Add(1)
			now, d := time.Now(), p.Delay()
			ch := chunk{data: buf[:k], due: now.Add(d)}
			if lc != nil {
				ch.log = &chunkLog{delay: d, tp: lc.current()}
			}
			select {
			case queue <- ch:
			case <-done:
				return
			}
		}
		if err != nil {
			break
		}
	}
	close(queue)
	<-done
}

// writeDue writes queued chunks at their due times until the queue is
// closed, a write fails or the proxy closes. With lc, each chunk written is
// logged, its Written stamped after the write returned.
func (p *Proxy) writeDue(dst net.Conn, queue <-chan chunk, lc *connLog) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ch := range queue {
		if wait := time.Until(ch.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-p.ctx.Done():
				return
			}
		}
		n, err := dst.Write(ch.data)
		p.toClient.Add(int64(n))
		if lc != nil && n > 0 {
			lc.emit(ToClient, ch.log.tp, ch.due.Add(-ch.log.delay), time.Now(), n, ch.log.delay)
		}
		if err != nil {
			return
		}
	}
}

// closeWrite half-closes c when it can, so the peer sees the end of data.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	c.Close()
}
