// Package upstream is the lab's slow dependency: a real HTTP server on the
// loopback interface that answers every request after a fixed delay.
//
// It plays the "100 ms blocking HTTP call" of the seed experiment (docs/demo-service.md). The lab runs it in the
// orchestrator's own process, not the demo service's, so the service can be
// paused or CPU-throttled alone while the upstream keeps time. The delay is a
// timer, not a busy loop: the upstream uses no CPU while a request waits.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDelay is how long the upstream waits before answering when
// Options.Delay is zero.
const DefaultDelay = 100 * time.Millisecond

// Options configures the upstream. Zero values take the defaults.
type Options struct {
	// Delay is how long each request waits before the answer; 0 means
	// DefaultDelay. A request's ?ms=N query overrides it.
	Delay time.Duration
	// Addr is the address to listen on; "" means a free port on 127.0.0.1.
	Addr string
}

// DefaultOptions is the seed experiment's upstream: 100 ms on a free loopback port.
var DefaultOptions = Options{Delay: DefaultDelay, Addr: "127.0.0.1:0"}

// Handler answers every request with "ok\n" after a delay. It counts the
// requests it has answered.
type Handler struct {
	delay  time.Duration
	served atomic.Int64
}

// New returns the upstream's handler for opts.
func New(opts Options) *Handler {
	if opts.Delay <= 0 {
		opts.Delay = DefaultDelay
	}
	return &Handler{delay: opts.Delay}
}

// ServeHTTP waits for the delay (or ?ms=N milliseconds) and answers "ok".
// A malformed ms is a 400; a request cancelled while waiting gets no answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	delay, err := requestDelay(r, h.delay)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	h.served.Add(1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// Served reports how many requests have been answered.
func (h *Handler) Served() int64 { return h.served.Load() }

// requestDelay returns the ?ms=N override of r, or def when there is none.
func requestDelay(r *http.Request, def time.Duration) (time.Duration, error) {
	s := r.URL.Query().Get("ms")
	if s == "" {
		return def, nil
	}
	ms, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("query ms=%q: want a non-negative whole number of milliseconds", s)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Server is a running upstream.
type Server struct {
	*Handler
	srv  *http.Server
	ln   net.Listener
	done chan error
	stop func() bool

	closeOnce sync.Once
	closeErr  error
}

// Start listens on opts.Addr (a free loopback port by default) and serves the
// upstream until Close is called or ctx is cancelled.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultOptions.Addr
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("upstream: listen on %s: %w", opts.Addr, err)
	}
	h := New(opts)
	s := &Server{
		Handler: h,
		srv:     &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		ln:      ln,
		done:    make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	s.stop = context.AfterFunc(ctx, func() { s.srv.Close() })
	return s, nil
}

// URL is the base URL of the server, e.g. "http://127.0.0.1:41234/".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server at once, dropping requests in flight. It is safe to
// call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		if err := s.srv.Close(); err != nil {
			s.closeErr = fmt.Errorf("upstream: close %s: %w", s.ln.Addr(), err)
			return
		}
		if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
			s.closeErr = fmt.Errorf("upstream: serve %s: %w", s.ln.Addr(), err)
		}
	})
	return s.closeErr
}
