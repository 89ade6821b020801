// Package loadresult holds the record a load generator writes for each
// request, [Result], and [CountWindow], which counts the results that a
// recording's window covers.
//
// It sits below both its writer (package loadgen, which runs the load and
// encodes and decodes results) and its readers (package jvm takes the
// count as a plain value), so that an input reader does not import the load
// generator.
package loadresult

import "time"

// Result is the record of one request. A load generator produces them;
// encoders write them and decoders read them back.
type Result struct {
	// Seq numbers the requests of a run from 0 in the order they were due
	// (open model) or sent (closed model). A closed-model request aborted by
	// cancellation leaves a gap.
	Seq uint64 `json:"seq"`
	// Client is the closed model's client, or the open model's in-flight
	// slot, from 0; -1 for a dropped request.
	Client int `json:"client"`
	// Intended is when the request was due.
	Intended time.Time `json:"intended"`
	// Start is when it was sent; zero for a dropped request.
	Start time.Time `json:"start,omitzero"`
	// Latency runs from Intended to the end of the response body (or the
	// error).
	Latency time.Duration `json:"latency_ns"`
	// Code is the HTTP status code; 0 if no response arrived.
	Code int `json:"code"`
	// Error describes a failure: a transport error, or the status line of
	// a response with a code of 400 or more. Empty on success.
	Error string `json:"error,omitempty"`
	// BytesIn counts the response body bytes read.
	BytesIn int64 `json:"bytes_in"`
	// Warmup is set for a result that completed during the warm-up (a
	// dropped one: that was due during it). Reports exclude it.
	Warmup bool `json:"warmup,omitempty"`
	// Late is set for an open-model request sent after it was due because
	// MaxInFlight requests were outstanding: it waited for a free slot, or
	// was due while the run was still catching up after such a wait. Its
	// latency still counts from Intended.
	Late bool `json:"late,omitempty"`
	// Dropped is set for an open-model request that was still waiting for a
	// slot when the run ended; it was never sent.
	Dropped bool `json:"dropped,omitempty"`
}

// End is when the request completed: Intended + Latency.
func (r *Result) End() time.Time { return r.Intended.Add(r.Latency) }

// A Decoder reads the next Result into its argument. It returns io.EOF after
// the last one, and the same error on every call after a failure.
type Decoder func(*Result) error

// Decode calls dec(r).
func (dec Decoder) Decode(r *Result) error { return dec(r) }
