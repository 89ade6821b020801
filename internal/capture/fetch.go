package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/tracelog"
)

// errUnreachable is wrapped by fetch's error when the service could not be
// reached at all.
var errUnreachable = errors.New("unreachable")

// ErrNotFound is wrapped by fetch's error for a 404 answer.
var ErrNotFound = errors.New("404 Not Found")

// fetcher sends a capture's requests.
type fetcher struct {
	c       *http.Client
	token   string
	timeout time.Duration // of the whole capture, for error messages
}

// fetch GETs url into w and returns the bytes copied. what names the
// download in errors ("trace"); notFound is the advice for a 404.
func (f *fetcher) fetch(ctx context.Context, url, what, notFound string, w io.Writer, accept string) (int64, error) {
	token := f.token
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	url = httpurl.Redact(url) // from here on, url is for messages
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", tracelog.CaptureUserAgent) // the agent leaves it out of the service's requests
	resp, err := sameOrigin(f.c).Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, f.explain(ctx, req, err))
	}
	defer resp.Body.Close()
	if err := checkStatus(resp, url, token, notFound); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("%s: download from %s cut after %d bytes: %w", what, url, n, f.explain(ctx, req, err))
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("%s: download from %s cut after %d of %d bytes", what, url, n, resp.ContentLength)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: %s answered an empty body", what, url)
	}
	return n, nil
}

// explain turns transport errors into advice.
func (f *fetcher) explain(ctx context.Context, req *http.Request, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot connect to %s: connection refused (is the service running, and listening at this address?)%w", req.URL.Host, quiet(errUnreachable))
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s timed out after %v: %w", req.URL.Redacted(), f.timeout, opterr.Wrap("timeout", errors.New("may be too short (the default is the capture's seconds + 10 s)")))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the connection closed early (did the server's WriteTimeout end it?): %w", err)
	}
	return err
}

// checkStatus turns non-200 answers into advice.
func checkStatus(resp *http.Response, url, token, notFound string) error {
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized, http.StatusForbidden:
		if token == "" {
			return fmt.Errorf("%s answered %s: the service wants credentials: %w", url, resp.Status, opterr.Wrap("token", errors.New("not given")))
		}
		return fmt.Errorf("%s answered %s: the token was refused", url, resp.Status)
	case http.StatusNotFound:
		return fmt.Errorf("%s answered %w: %s", url, ErrNotFound, notFound)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
}

// quietErr wraps an error without adding to the message.
type quietErr struct{ err error }

func (q quietErr) Error() string { return "" }
func (q quietErr) Unwrap() error { return q.err }

func quiet(err error) error { return quietErr{err} }

// sameOrigin returns c with a redirect rule that keeps the token to the
// service the user named: a redirect to another origin (another host,
// port or scheme, a subdomain too, which Go's own rule lets it reach) is
// followed without the Authorization header.
func sameOrigin(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if httpurl.Origin(req.URL) != httpurl.Origin(via[0].URL) {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}
