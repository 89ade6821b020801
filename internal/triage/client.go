package triage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/httpurl"
)

// Client reads raw series from the Prometheus of c: its URL, credentials,
// time limit and response bound, as triage reads it (credentials only to
// the URL's origin, never in an error). Other readers use it: dbwait's
// database-host pressure (cmd/latscope, --dbhost-prometheus).
type Client struct {
	api     promAPI
	url     string // redacted, for errors
	timeout time.Duration
}

// NewClient checks c's URL and credentials and makes the client; the
// range, step and signal of c are not used.
func NewClient(c Config) (*Client, error) {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	switch {
	case c.URL == "":
		return nil, fmt.Errorf("%w: no Prometheus URL", ErrConfig)
	case c.BearerToken != "" && (c.Username != "" || c.Password != ""):
		return nil, fmt.Errorf("%w: a bearer token and basic auth together", ErrConfig)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: Prometheus URL %q: %w", ErrConfig, httpurl.Redact(c.URL), httpurl.RedactError(err))
	}
	rt := &authRoundTripper{base: api.DefaultRoundTripper, c: c, origin: httpurl.Origin(u), max: c.MaxResponseBytes}
	client, err := api.NewClient(api.Config{Address: c.URL, Client: &http.Client{Transport: rt, Timeout: c.Timeout + 5*time.Second}})
	if err != nil {
		return nil, fmt.Errorf("%w: Prometheus URL %q: %w", ErrConfig, httpurl.Redact(c.URL), httpurl.RedactError(err))
	}
	return &Client{api: promAPI{client}, url: httpurl.Redact(c.URL), timeout: c.Timeout}, nil
}

// URL is the client's Prometheus URL with any credentials taken out.
func (c *Client) URL() string { return c.url }

// RawSamples returns the samples of the series selector matches that
// Prometheus holds from from to to, as scraped: the range-vector selector
// selector[to−from] evaluated at to (an instant query), each sample at its
// scrape's time. Errors name the URL (redacted) and the selector; the
// API's warnings are returned beside the matrix.
func (c *Client) RawSamples(ctx context.Context, selector string, from, to time.Time) (model.Matrix, []string, error) {
	if !to.After(from) {
		return nil, nil, fmt.Errorf("%w: the range %s to %s is empty", ErrConfig, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	secs := int64((to.Sub(from) + time.Second - 1) / time.Second)
	query := fmt.Sprintf("%s[%ds]", selector, secs)
	form := url.Values{"query": {query}, "time": {formatTime(to)}, "timeout": {model.Duration(c.timeout).String()}}
	status, body, err := c.api.post(ctx, "/api/v1/query", form)
	if err != nil {
		return nil, nil, fmt.Errorf("Prometheus at %s: %s: %w", c.url, query, httpurl.RedactError(err))
	}
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	warnings, err := decodeAnswer(status, body, &data)
	if err != nil {
		return nil, warnings, fmt.Errorf("Prometheus at %s: %s: %w", c.url, query, err)
	}
	if data.ResultType != "matrix" {
		return nil, warnings, fmt.Errorf("Prometheus at %s: %s: a %q result, not a matrix", c.url, query, data.ResultType)
	}
	var m model.Matrix
	if err := json.Unmarshal(data.Result, &m); err != nil {
		return nil, warnings, fmt.Errorf("Prometheus at %s: %s: %w", c.url, query, err)
	}
	return m, warnings, nil
}
