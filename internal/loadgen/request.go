package loadgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"
)

// send makes one request due at intended and measures it. ok is false if
// ctx was cancelled before it finished: such a request measured nothing.
func (r *runner) send(ctx context.Context, intended time.Time) (res Result, ok bool) {
	res.Intended = intended.Round(0)
	rctx := ctx
	if r.opts.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
	}
	req, err := r.newRequest(rctx)
	if err != nil { // Validate made the same request, so this is unexpected
		res.Error = err.Error()
		return res, true
	}
	start := time.Now()
	res.Start = start.Round(0)
	resp, err := r.client.Do(req)
	if err == nil {
		res.Code = resp.StatusCode
		res.BytesIn, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode >= 400 {
			res.Error = resp.Status
		}
	}
	end := time.Now()
	if err != nil {
		if ctx.Err() != nil {
			return res, false
		}
		res.Error = message(err)
	}
	res.Latency = end.Sub(intended)
	res.Warmup = end.Before(r.warmupEnd)
	return res, true
}

// newRequest builds the run's request.
func (r *runner) newRequest(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if r.opts.Body != nil {
		body = bytes.NewReader(r.opts.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.opts.Method, r.opts.URL, body)
	if err != nil {
		return nil, err
	}
	if r.opts.Header != nil {
		req.Header = r.opts.Header.Clone()
		if h := req.Header.Get("Host"); h != "" {
			req.Host = h
		}
	}
	return req, nil
}

// message is err's text without net/http's `Get "URL": ` prefix, which is
// the same for every request of a run.
func message(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	return err.Error()
}
