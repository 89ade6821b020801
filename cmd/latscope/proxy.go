package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/latscope/latscope/tcpproxy"
)

func init() {
	register("proxy", "TCP proxy that delays every response chunk from the server (the lab's network-delay condition)", runProxy)
}

const proxySynopsis = "proxy --to HOST:PORT [--listen ADDR] [--delay D]"

const proxyExamples = `
examples:
  latscope proxy --to 127.0.0.1:5432 --delay 30ms                 listen on a free loopback port
  latscope proxy --listen 127.0.0.1:6432 --to 127.0.0.1:5432 --delay 30ms
  psql -h 127.0.0.1 -p 6432 -c 'SELECT 1'                         every answer 30 ms late
`

// proxyOptions are the flags of `latscope proxy`.
type proxyOptions struct {
	opts     tcpproxy.Options
	addrFile string
}

func runProxy(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseProxy(stderr, args)
	if err != nil {
		return err
	}
	p, err := tcpproxy.Start(ctx, o.opts)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	defer p.Close()
	if o.addrFile != "" {
		if err := writeAddrFile(o.addrFile, p.Addr()+"\n"); err != nil {
			return fmt.Errorf("proxy: --addr-file: %w", err)
		}
	}
	fmt.Fprintf(stdout, "proxying %s -> %s, delaying every response chunk by %v (Ctrl-C stops)\n", p.Addr(), o.opts.To, o.opts.Delay)
	<-ctx.Done()
	p.Close()
	st := p.Stats()
	fmt.Fprintf(stdout, "proxy: %d connections (%d upstream dials failed), %d chunks delayed, %d bytes to clients, %d to the server\n",
		st.Conns, st.Failed, st.Chunks, st.ToClient, st.ToUpstream)
	return nil
}

func parseProxy(stderr io.Writer, args []string) (*proxyOptions, error) {
	o := &proxyOptions{opts: tcpproxy.Options{Listen: "127.0.0.1:0"}}
	fs := newFlagSet("proxy", proxySynopsis, stderr)
	fs.StringVar(&o.opts.Listen, "listen", o.opts.Listen, "`ADDR` to listen on")
	fs.StringVar(&o.opts.To, "to", "", "server `HOST:PORT` to forward to (required)")
	fs.DurationVar(&o.opts.Delay, "delay", 0, "added to every chunk the server sends")
	fs.StringVar(&o.addrFile, "addr-file", "", "write the listening address to `FILE` once listening")
	usageWith(fs, stderr, proxySynopsis, proxyExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("proxy: unexpected argument %q", fs.Arg(0))
	case o.opts.To == "":
		return nil, errors.New("proxy: flag --to is required (the server's HOST:PORT)")
	case o.opts.Delay < 0:
		return nil, fmt.Errorf("proxy: flag --delay %v: want 0 or more", o.opts.Delay)
	}
	return o, nil
}
