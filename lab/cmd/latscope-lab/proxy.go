package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/tcpproxy"
)

func init() {
	cli.Register("proxy", "TCP proxy that delays every response chunk from the server (the lab's network-delay condition)", runProxy)
}

const proxySynopsis = "proxy --to HOST:PORT [--listen ADDR] [--delay D] [--log FILE]"

const proxyExamples = `
examples:
  latscope-lab proxy --to 127.0.0.1:5432 --delay 30ms                 listen on a free loopback port
  latscope-lab proxy --listen 127.0.0.1:6432 --to 127.0.0.1:5432 --delay 30ms
  psql -h 127.0.0.1 -p 6432 -c 'SELECT 1'                         every answer 30 ms late
  latscope-lab proxy --to 127.0.0.1:5432 --delay 30ms --log proxy.log  one line per chunk, on the proxy's own clock
`

// proxyOptions are the flags of `latscope-lab proxy`.
type proxyOptions struct {
	opts     tcpproxy.Options
	addrFile string
	logFile  string
}

// proxyProbeTimeout bounds the test connection to the server at start.
const proxyProbeTimeout = 3 * time.Second

// proxyDialReportEvery is the least time between two lines about failed
// dials to the server.
const proxyDialReportEvery = 10 * time.Second

func runProxy(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseProxy(stderr, args)
	if err != nil {
		return err
	}
	dials := &dialReporter{w: stderr, to: o.opts.To, every: proxyDialReportEvery}
	o.opts.DialFailed = dials.failed
	lf, err := openProxyLog(o)
	if err != nil {
		return err
	}
	p, err := tcpproxy.Start(ctx, o.opts)
	if err != nil {
		lf.discard()
		return proxyFlagError(err)
	}
	defer p.Close()
	// A proxy may be started before its server, so a server that does not
	// answer yet is a warning, not an error; without it the proxy would
	// listen silently while closing every client.
	if err := proxyProbe(ctx, o.opts.To); err != nil && ctx.Err() == nil {
		dials.printf("proxy: warning: the server %s does not answer (%v); listening anyway: client connections are closed until it does\n", o.opts.To, bareDialError(err))
	}
	if o.addrFile != "" {
		if err := writeAddrFile(o.addrFile, p.Addr()+"\n"); err != nil {
			p.Close()
			lf.discard()
			return fmt.Errorf("proxy: --addr-file: %w", err)
		}
	}
	fmt.Fprintf(stdout, "proxying %s -> %s, delaying every response chunk by %v (Ctrl-C stops)\n", p.Addr(), o.opts.To, o.opts.Delay)
	if lf != nil {
		fmt.Fprintf(stdout, "logging every chunk to %s\n", o.logFile)
	}
	<-ctx.Done()
	p.Close()
	st := p.Stats()
	fmt.Fprintf(stdout, "proxy: %d connections (%d upstream dials failed), %d chunks delayed, %d bytes to clients, %d to the server\n",
		st.Conns, st.Failed, st.Chunks, st.ToClient, st.ToUpstream)
	if err := lf.close(); err != nil {
		return fmt.Errorf("proxy: --log %s: %w", o.logFile, err)
	}
	return nil
}

// proxyProbe opens and closes one connection to addr.
func proxyProbe(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: proxyProbeTimeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// bareDialError drops the "dial tcp ADDR: " prefix of a dial error whose
// address the message already names.
func bareDialError(err error) error {
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Err != nil {
		return oe.Err
	}
	return err
}

// dialReporter prints failed dials to the server on stderr: the first at
// once, then at most one line per period with the count since the last.
type dialReporter struct {
	w     io.Writer
	to    string
	every time.Duration

	mu     sync.Mutex
	last   time.Time
	missed int
}

func (d *dialReporter) failed(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if !d.last.IsZero() && now.Sub(d.last) < d.every {
		d.missed++
		return
	}
	more := ""
	if d.missed > 0 {
		more = fmt.Sprintf(" (and %d more since the last such line)", d.missed)
	}
	fmt.Fprintf(d.w, "proxy: closed a client connection: the server %s does not answer (%v)%s\n", d.to, bareDialError(err), more)
	d.last, d.missed = now, 0
}

// printf writes to the reporter's writer under its lock.
func (d *dialReporter) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.w, format, args...)
}

// proxyFlags names the flag of each tcpproxy.Options field the command sets.
var proxyFlags = map[string]string{"To": "--to", "Listen": "--listen", "Delay": "--delay"}

// proxyFlagError tells a tcpproxy.OptionError in terms of the flag.
func proxyFlagError(err error) error {
	if oe, ok := errors.AsType[*tcpproxy.OptionError](err); ok && proxyFlags[oe.Option] != "" {
		return fmt.Errorf("proxy: flag %s %s: %s", proxyFlags[oe.Option], oe.Value, oe.Reason)
	}
	return fmt.Errorf("proxy: %w", err)
}

func parseProxy(stderr io.Writer, args []string) (*proxyOptions, error) {
	o := &proxyOptions{opts: tcpproxy.Options{Listen: "127.0.0.1:0"}}
	fs := cli.NewFlagSet("proxy", proxySynopsis, stderr)
	fs.StringVar(&o.opts.Listen, "listen", o.opts.Listen, "`ADDR` to listen on, [HOST]:PORT (port 0 = any free port)")
	fs.StringVar(&o.opts.To, "to", "", "server `HOST:PORT` to forward to (required; port 1 to 65535)")
	fs.DurationVar(&o.opts.Delay, "delay", 0, "added to every chunk the server sends (0 to 1h)")
	fs.StringVar(&o.addrFile, "addr-file", "", "write the listening address to `FILE` once listening")
	fs.StringVar(&o.logFile, "log", "", "write one line per chunk, with the proxy's clock, to `FILE` (format: docs/commands.md)")
	cli.UsageWith(fs, stderr, proxySynopsis, proxyExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("proxy: unexpected argument %q", fs.Arg(0))
	case o.opts.To == "":
		return nil, errors.New("proxy: flag --to is required (the server's HOST:PORT)")
	case o.opts.Listen == "":
		return nil, errors.New(`proxy: flag --listen "": want [HOST]:PORT (the default, 127.0.0.1:0, is any free loopback port)`)
	}
	if err := o.opts.Validate(); err != nil {
		return nil, proxyFlagError(err)
	}
	return o, nil
}

// proxyLog is the --log file while the proxy runs.
type proxyLog struct {
	f       *os.File
	w       *tcpproxy.LogWriter
	created bool // the proxy created the file (discard may remove it)
}

// openProxyLog creates the --log file and writes its header, before the
// proxy listens, and sets o.opts.Log; nil without --log. A failure names
// the flag and leaves no file.
func openProxyLog(o *proxyOptions) (*proxyLog, error) {
	if o.logFile == "" {
		return nil, nil
	}
	_, statErr := os.Lstat(o.logFile)
	created := errors.Is(statErr, fs.ErrNotExist) // discard removes only a file it made (not /dev/stdout)
	f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("proxy: flag --log %q: %w", o.logFile, bareFileError(err))
	}
	w, err := tcpproxy.NewLogWriter(f, tcpproxy.LogHeader{To: o.opts.To, Delay: o.opts.Delay})
	if err != nil {
		l := &proxyLog{f: f, created: created}
		l.discard()
		return nil, fmt.Errorf("proxy: flag --log %q: %w", o.logFile, err)
	}
	o.opts.Log = w.Log
	return &proxyLog{f: f, w: w, created: created}, nil
}

// bareFileError drops the "open PATH: " prefix of an error whose path the
// message already names.
func bareFileError(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

// discard closes the log of a proxy that did not start, and removes it
// when the proxy created it.
func (l *proxyLog) discard() {
	if l == nil {
		return
	}
	l.f.Close()
	if l.created {
		os.Remove(l.f.Name())
	}
}

// close flushes and closes the log once the proxy has stopped.
func (l *proxyLog) close() error {
	if l == nil {
		return nil
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}
