package jvm

import (
	"io"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/loadresult"
)

// TestCountRequests: CountRequests is loadresult.CountWindow as Requests
// (the counting rules are tested in package loadresult).
func TestCountRequests(t *testing.T) {
	rs := []loadresult.Result{
		{Intended: t0.Add(time.Second), Start: t0.Add(time.Second), Latency: time.Second},
		{Intended: t0.Add(30 * time.Second), Latency: time.Second},
	}
	dec := func(r *loadresult.Result) error {
		if len(rs) == 0 {
			return io.EOF
		}
		*r, rs = rs[0], rs[1:]
		return nil
	}
	q, err := CountRequests(dec, t0, t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if q.Count != 1 || q.Outside != 1 || len(q.Latencies) != 1 || q.Latencies[0] != 1e9 {
		t.Errorf("CountRequests = %+v, want 1 counted (1 s) and 1 outside", q)
	}
}
