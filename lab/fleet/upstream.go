package fleet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/lab"
)

// Upstream is the HTTP service RouteQuote calls, shared by every instance:
// it answers each request after its delay, which the upstream and thin
// phases raise (and TestRecordUpstream).
type Upstream struct {
	// URL is the address the instances call (`latscope-lab fleet-serve --upstream`).
	URL   string
	srv   *http.Server
	delay atomic.Int64 // nanoseconds
}

// StartUpstream starts an Upstream on a free port of 127.0.0.1 answering
// after d.
func StartUpstream(ctx context.Context, d time.Duration) (*Upstream, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	u := &Upstream{URL: "http://" + ln.Addr().String() + "/"}
	u.SetDelay(d)
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lab.Sleep(r.Context(), u.Delay())
		io.WriteString(w, "42\n")
	}), ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(ln)
	return u, nil
}

// SetDelay sets the time the upstream takes to answer.
func (u *Upstream) SetDelay(d time.Duration) { u.delay.Store(int64(d)) }

// Delay is the time the upstream takes to answer.
func (u *Upstream) Delay() time.Duration { return time.Duration(u.delay.Load()) }

// Close stops the upstream.
func (u *Upstream) Close() error { return u.srv.Close() }
