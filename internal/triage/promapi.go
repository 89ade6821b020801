package triage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/termsafe"
)

// promAPI is the small part of the Prometheus HTTP API v1 that triage
// uses, over client_golang's api.Client. (client_golang's
// api/prometheus/v1 decodes with a JSON library this module does not
// require; the envelope is small enough to decode here.)
type promAPI struct{ client api.Client }

// promRange is a range query's time grid: evaluations at Start,
// Start+Step, …, End.
type promRange struct {
	Start, End time.Time
	Step       time.Duration
}

// apiError is an answer other than success: the HTTP status, and the
// API's errorType and error when the body had them.
type apiError struct {
	Status    int
	Type, Msg string
}

// Error returns the API's message, or the HTTP status. The message came
// from the server: its control characters are escaped (termsafe).
func (e *apiError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("%s: %s", termsafe.String(e.Type), termsafe.String(e.Msg))
	}
	return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
}

// envelope is the API's answer.
type envelope struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Infos     []string        `json:"infos"`
}

// queryRange runs query over r and returns the matrix with Prometheus's
// warnings and infos.
func (p promAPI) queryRange(ctx context.Context, query string, r promRange, timeout time.Duration) (model.Matrix, []string, error) {
	form := url.Values{
		"query":   {query},
		"start":   {formatTime(r.Start)},
		"end":     {formatTime(r.End)},
		"step":    {strconv.FormatFloat(r.Step.Seconds(), 'f', -1, 64)},
		"timeout": {model.Duration(timeout).String()},
	}
	status, body, err := p.post(ctx, "/api/v1/query_range", form)
	if err != nil {
		return nil, nil, err
	}
	return decodeRange(status, body)
}

// decodeRange decodes a range query's answer: its HTTP status and body.
func decodeRange(status int, body []byte) (model.Matrix, []string, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	warnings, err := decodeAnswer(status, body, &data)
	if err != nil {
		return nil, warnings, err
	}
	if data.ResultType != "matrix" {
		return nil, warnings, &apiError{Status: status, Type: "bad_response", Msg: fmt.Sprintf("a %q result, not a matrix", data.ResultType)}
	}
	var m model.Matrix
	if err := json.Unmarshal(data.Result, &m); err != nil {
		return nil, warnings, &apiError{Status: status, Type: "bad_response", Msg: err.Error()}
	}
	return m, warnings, nil
}

// labelValues returns the values of label on the series matching match.
// The endpoint takes GET only (Prometheus 2.42 answers a POST 405).
func (p promAPI) labelValues(ctx context.Context, label, match string, start, end time.Time) ([]string, error) {
	form := url.Values{"match[]": {match}, "start": {formatTime(start)}, "end": {formatTime(end)}}
	u := p.client.URL("/api/v1/label/"+url.PathEscape(label)+"/values", nil)
	u.RawQuery = form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, body, err := p.client.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	status := resp.StatusCode
	var vals []string
	_, err = decodeAnswer(status, body, &vals)
	return vals, err
}

// post sends form to the endpoint ep and returns the answer's status and
// body.
func (p promAPI) post(ctx context.Context, ep string, form url.Values) (int, []byte, error) {
	u := p.client.URL(ep, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body, err := p.client.Do(ctx, req)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

// decodeAnswer decodes an API answer's envelope and its data into into,
// and returns the answer's warnings and infos.
func decodeAnswer(status int, body []byte, into any) ([]string, error) {
	var env envelope
	jsonErr := json.Unmarshal(body, &env)
	warnings := append(env.Warnings, env.Infos...)
	switch {
	case status/100 != 2 || env.Status == "error":
		return warnings, &apiError{Status: status, Type: env.ErrorType, Msg: env.Error}
	case jsonErr != nil:
		return warnings, &apiError{Status: status, Type: "bad_response", Msg: "not a Prometheus API answer: " + jsonErr.Error()}
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		return warnings, &apiError{Status: status, Type: "bad_response", Msg: err.Error()}
	}
	return warnings, nil
}

// formatTime formats t as the API's seconds since the epoch.
func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64)
}
