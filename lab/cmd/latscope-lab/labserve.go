package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/lab/demo"
)

// labServeOptions are the flags of `latscope-lab serve`.
type labServeOptions struct {
	mode     demo.Mode
	addr     string
	upstream string
	dbURL    string
	pool     int
	addrFile string
	cpuIters int
}

// labServeShutdown bounds the graceful shutdown; a profile or trace capture in
// progress is cut off after it.
const labServeShutdown = 10 * time.Second

const labServeSynopsis = "serve --upstream URL --db-url URL [flags]"

const labServeExamples = `
examples:
  latscope-lab serve --upstream http://127.0.0.1:41234/ --db-url postgres://postgres@127.0.0.1:5432/postgres
  latscope-lab serve --mode concurrent --addr-file /tmp/demo.addr --upstream URL --db-url URL
  curl http://ADDR/work; curl -o t.trace 'http://ADDR/debug/pprof/trace?seconds=5'
`

func init() {
	cli.Register("serve", "the seed lab's demo service (upstream call, PostgreSQL query, CPU work), as a process of its own", runLabServe)
}

// runLabServe runs the demo service as its own process: it listens, prints
// its address, serves until ctx is cancelled and then shuts down gracefully.
func runLabServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	opts, err := parseLabServe(stderr, args)
	if err != nil {
		return err
	}
	svc, err := demo.New(ctx, demo.Config{
		Mode:        opts.mode,
		UpstreamURL: opts.upstream,
		DBURL:       opts.dbURL,
		PoolSize:    opts.pool,
		CPUIters:    opts.cpuIters,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer svc.Close()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %s: %w", opts.addr, err)
	}
	addr := ln.Addr().String()
	if opts.addrFile != "" {
		if err := writeAddrFile(opts.addrFile, addr+"\n"); err != nil {
			ln.Close()
			return fmt.Errorf("serve: --addr-file: %w", err)
		}
	}
	fmt.Fprintf(stdout, "listening on http://%s mode=%s cpu_iters=%d\n", addr, opts.mode, svc.CPUIters())
	return serveLabUntilDone(ctx, &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}, ln)
}

// parseLabServe parses and checks the flags.
func parseLabServe(stderr io.Writer, args []string) (labServeOptions, error) {
	opts := labServeOptions{mode: demo.DefaultConfig.Mode, addr: "127.0.0.1:0", pool: demo.DefaultConfig.PoolSize}
	fs := cli.NewFlagSet("serve", labServeSynopsis, stderr)
	fs.Var(&opts.mode, "mode", "`MODE` of a request: serial, concurrent or fixed (default serial)")
	fs.StringVar(&opts.addr, "addr", opts.addr, "`ADDR` to listen on")
	fs.StringVar(&opts.upstream, "upstream", "", "`URL` of the upstream, fetched by every request (required)")
	fs.StringVar(&opts.dbURL, "db-url", "", "PostgreSQL `URL` or DSN (required)")
	fs.IntVar(&opts.pool, "pool", opts.pool, "database connections (`N`), all opened at start")
	fs.StringVar(&opts.addrFile, "addr-file", "", "write the listening address to `FILE` once listening")
	fs.IntVar(&opts.cpuIters, "cpu-iters", 0, "SHA-256 iterations (`N`) per millisecond of CPU; 0 = calibrate at start")
	cli.UsageWith(fs, stderr, labServeSynopsis, labServeExamples)
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	switch {
	case fs.NArg() > 0:
		return opts, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	case opts.upstream == "":
		return opts, errors.New("serve: flag --upstream is required")
	case httpurl.Check(opts.upstream) != nil:
		return opts, fmt.Errorf("serve: flag --upstream %q: %w", opts.upstream, httpurl.Check(opts.upstream))
	case opts.dbURL == "":
		return opts, errors.New("serve: flag --db-url is required")
	case opts.pool < 1:
		return opts, fmt.Errorf("serve: flag --pool %d: want at least 1", opts.pool)
	case opts.cpuIters < 0:
		return opts, fmt.Errorf("serve: flag --cpu-iters %d: want 0 (calibrate) or more", opts.cpuIters)
	}
	return opts, nil
}

// serveLabUntilDone serves on ln until ctx is cancelled, then shuts srv down,
// letting requests in flight finish for up to labServeShutdown.
func serveLabUntilDone(ctx context.Context, srv *http.Server, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), labServeShutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// writeAddrFile writes the address atomically, so a reader never sees a partial file.
func writeAddrFile(path, data string) error { return atomicfile.WriteString(path, data) }
