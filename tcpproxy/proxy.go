// Package tcpproxy is a TCP proxy that delays what the server sends: every
// chunk read from the upstream is written to the client Delay after it was
// read, in order. Chunks are not delayed one after another (a delay line, not
// a queue of sleeps), so a response split into several reads arrives Delay
// late as a whole, and throughput is not capped by the delay.
//
// The lab puts it between a service and PostgreSQL to make the seed's
// "network delay" condition: the database measures the same statement time,
// the application measures Delay more (design §6). What the client sends is
// passed on at once.
package tcpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxQueued bounds the chunks read but not yet written per connection
// when Options.MaxQueued is zero; reading stops (TCP backpressure) when full.
const DefaultMaxQueued = 1024

// chunkSize is the largest read from the upstream.
const chunkSize = 32 << 10

// Options configures a Proxy.
type Options struct {
	Listen    string        // address to listen on; "" = 127.0.0.1:0
	To        string        // upstream address (required)
	Delay     time.Duration // added to every chunk from the upstream; 0 = none
	MaxQueued int           // chunks in flight per connection; 0 = DefaultMaxQueued
	// DialTimeout bounds connecting to the upstream; 0 = 10 s.
	DialTimeout time.Duration
}

// Stats counts what a Proxy has done.
type Stats struct {
	Conns      int64 // connections accepted
	Failed     int64 // connections whose upstream dial failed
	Chunks     int64 // chunks from the upstream, each delayed
	ToClient   int64 // bytes written to clients
	ToUpstream int64 // bytes written to the upstream
}

// Proxy accepts connections and forwards each to the upstream.
type Proxy struct {
	opts  Options
	ln    net.Listener
	delay atomic.Int64
	wg    sync.WaitGroup
	stop  context.CancelFunc
	ctx   context.Context

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	conns64, failed, chunks, toClient, toUpstream atomic.Int64
	closeOnce                                     sync.Once
}

// Start listens and serves until Close or until ctx is done.
func Start(ctx context.Context, opts Options) (*Proxy, error) {
	if opts.To == "" {
		return nil, errors.New("tcpproxy: no upstream address (Options.To)")
	}
	if opts.Delay < 0 {
		return nil, fmt.Errorf("tcpproxy: delay %v is negative", opts.Delay)
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 10 * time.Second
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("tcpproxy: listen %s: %w", opts.Listen, err)
	}
	p := &Proxy{opts: opts, ln: ln, conns: map[net.Conn]struct{}{}}
	p.ctx, p.stop = context.WithCancel(ctx)
	p.delay.Store(int64(opts.Delay))
	p.wg.Add(1)
	go p.accept()
	go func() {
		<-p.ctx.Done()
		p.Close()
	}()
	return p, nil
}

// Addr is the address the proxy listens on (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Delay returns the current delay.
func (p *Proxy) Delay() time.Duration { return time.Duration(p.delay.Load()) }

// SetDelay changes the delay for chunks read from now on.
func (p *Proxy) SetDelay(d time.Duration) {
	p.delay.Store(int64(max(d, 0)))
}

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Conns: p.conns64.Load(), Failed: p.failed.Load(), Chunks: p.chunks.Load(),
		ToClient: p.toClient.Load(), ToUpstream: p.toUpstream.Load(),
	}
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines. It is idempotent.
func (p *Proxy) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.stop()
		err = p.ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// accept serves connections until the listener is closed.
func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns64.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers c for Close; it reports false once the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}
