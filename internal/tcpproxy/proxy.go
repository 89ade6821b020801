// Package tcpproxy is a TCP proxy that delays what the server sends: every
// chunk read from the upstream is written to the client Delay after it was
// read, in order. Chunks are not delayed one after another (a delay line, not
// a queue of sleeps), so a response split into several reads arrives Delay
// late as a whole, and throughput is not capped by the delay.
//
// The lab puts it between a service and PostgreSQL to make the database
// case's "network delay" condition (docs/method.md §10): the database
// measures the same statement time, the application measures Delay more
// (docs/method.md §8). What the client sends is passed on at once.
//
// With Options.Log the proxy reports every chunk on its own clock: when it
// read it and when it had written it on, on CLOCK_MONOTONIC (the clock of
// Go execution traces), with the traceparent of the statement it belongs to,
// found in the client's SQL comments. LogWriter writes these events as text
// (the format of `latscope-lab proxy --log`, docs/commands.md) and ReadLog reads
// them back.
package tcpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxQueued bounds the chunks read but not yet written per connection
// when Options.MaxQueued is zero; reading stops (TCP backpressure) when full.
const DefaultMaxQueued = 1024

// chunkSize is the largest read from the upstream.
const chunkSize = 32 << 10

// Options configures a Proxy. Start checks it with Validate.
type Options struct {
	Listen    string        // address to listen on, [HOST]:PORT, port 0 to 65535; "" = 127.0.0.1:0
	To        string        // upstream HOST:PORT, port 1 to 65535 (required)
	Delay     time.Duration // added to every chunk from the upstream; 0 (none) to MaxDelay
	MaxQueued int           // chunks in flight per connection, 0 to MaxMaxQueued; 0 = DefaultMaxQueued
	// DialTimeout bounds connecting to the upstream; 0 = 10 s.
	DialTimeout time.Duration
	// DialFailed, if set, is called with the error of every failed dial to
	// the upstream (the client's connection is then closed). It is called
	// from the connection's goroutine, never after Close returns.
	DialFailed func(error)
	// Log, if set, is called with every chunk passed on, either way, with
	// the proxy's own clock readings (Event). It is called from the
	// connections' goroutines, concurrently, in the data path: it must be
	// quick, and a reply chunk's call delays the next chunk's write. Never
	// after Close returns. Nil costs one nil check per chunk.
	Log func(Event)
}

// Bounds of Options.
const (
	// MaxDelay is the longest delay: more is a typo, not a network.
	MaxDelay = time.Hour
	// MaxMaxQueued is the largest Options.MaxQueued (each chunk holds up
	// to 32 KiB).
	MaxMaxQueued = 1 << 16
)

// An OptionError is Validate's refusal of one field of Options.
type OptionError struct {
	Option string // the field: "Listen", "To", "Delay", "MaxQueued", "DialTimeout"
	Value  string // the refused value as text; strings are quoted
	Reason string
	Err    error // the cause, when the system refused the value (the listen address taken); else nil
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("tcpproxy: %s %s: %s", e.Option, e.Value, e.Reason)
}

// Unwrap returns the system's error behind the refusal, if any.
func (e *OptionError) Unwrap() error { return e.Err }

// Validate checks every field of o and returns an *OptionError naming the
// first bad one. Addresses are checked for their form only: nothing is
// resolved or dialled.
func (o Options) Validate() error {
	if o.To == "" {
		return &OptionError{Option: "To", Value: `""`, Reason: "no upstream address: want HOST:PORT"}
	}
	if err := CheckAddr(o.To, false); err != nil {
		return &OptionError{Option: "To", Value: strconv.Quote(o.To), Reason: err.Error()}
	}
	if o.Listen != "" {
		if err := CheckAddr(o.Listen, true); err != nil {
			return &OptionError{Option: "Listen", Value: strconv.Quote(o.Listen), Reason: err.Error()}
		}
	}
	switch {
	case o.Delay < 0 || o.Delay > MaxDelay:
		return &OptionError{Option: "Delay", Value: o.Delay.String(), Reason: fmt.Sprintf("want 0 to %v", MaxDelay)}
	case o.MaxQueued < 0 || o.MaxQueued > MaxMaxQueued:
		return &OptionError{Option: "MaxQueued", Value: strconv.Itoa(o.MaxQueued), Reason: fmt.Sprintf("want 0 (the default, %d) to %d", DefaultMaxQueued, MaxMaxQueued)}
	case o.DialTimeout < 0:
		return &OptionError{Option: "DialTimeout", Value: o.DialTimeout.String(), Reason: "want 0 (10 s) or more"}
	}
	return nil
}

// CheckAddr checks that addr is HOST:PORT: a host name or IP address (IPv6
// in brackets) and a decimal port from 1 to 65535. A listen address may
// leave the host out (all interfaces) and use port 0 (any free port). A URL
// such as http://host:80 is refused: the proxy forwards TCP, not HTTP.
func CheckAddr(addr string, listen bool) error {
	if strings.Contains(addr, "://") {
		return errors.New("want HOST:PORT, not a URL")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return fmt.Errorf("want HOST:PORT: %s", ae.Err)
		}
		return fmt.Errorf("want HOST:PORT: %w", err)
	}
	minPort := 1
	if listen {
		minPort = 0
	}
	n, err := strconv.Atoi(port)
	if err != nil || strings.TrimLeft(port, "0123456789") != "" || n < minPort || n > 65535 {
		return fmt.Errorf("port %q: want a number from %d to 65535", port, minPort)
	}
	switch {
	case host == "" && listen:
		return nil
	case host == "":
		return errors.New("no host: want HOST:PORT")
	case strings.HasPrefix(addr, "["): // SplitHostPort took the brackets of an IPv6 address
		ip, _, _ := strings.Cut(host, "%") // zone
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("host %q is not an IPv6 address", host)
		}
	case strings.IndexFunc(host, notHostChar) >= 0:
		return fmt.Errorf("host %q: want a host name or IP address", host)
	}
	return nil
}

// notHostChar reports a character that no host name or IPv4 address has.
func notHostChar(c rune) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_')
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
	clock clock // when opts.Log is set

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	conns64, failed, chunks, toClient, toUpstream atomic.Int64
	closeOnce                                     sync.Once
}

// Start checks opts, listens and serves until Close or until ctx is done.
// It does not dial the upstream: a proxy may start before its server, and
// each client connection dials on its own (see Options.DialFailed).
func Start(ctx context.Context, opts Options) (*Proxy, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.MaxQueued == 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 10 * time.Second
	}
	var clk clock
	if opts.Log != nil {
		var err error
		if clk, err = newClock(); err != nil {
			return nil, err
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Listen)
	if err != nil {
		reason := err.Error()
		if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Err != nil {
			reason = oe.Err.Error() // "bind: address already in use", without the address again
		}
		return nil, &OptionError{Option: "Listen", Value: opts.Listen, Reason: "cannot listen: " + reason, Err: err}
	}
	p := &Proxy{opts: opts, ln: ln, conns: map[net.Conn]struct{}{}, clock: clk}
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

// SetDelay changes the delay for chunks read from now on; it is clamped to
// 0 to MaxDelay.
func (p *Proxy) SetDelay(d time.Duration) {
	p.delay.Store(int64(min(max(d, 0), MaxDelay)))
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
		id := p.conns64.Add(1)
		p.wg.Add(1)
		go p.serve(c, id)
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
