package loadresult_test

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/loadresult"
)

func results(rs []loadgen.Result) loadgen.Decoder {
	return func(r *loadgen.Result) error {
		if len(rs) == 0 {
			return io.EOF
		}
		*r, rs = rs[0], rs[1:]
		return nil
	}
}

var t0 = time.Date(2026, 12, 2, 14, 9, 40, 123456789, time.UTC)

func TestCountWindow(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	req := func(start, lat float64) loadgen.Result {
		return loadgen.Result{Intended: at(start), Start: at(start), Latency: time.Duration(lat * float64(time.Second)), Code: 200}
	}
	warm, dropped := req(12, 1), loadgen.Result{Intended: at(13), Dropped: true, Client: -1}
	warm.Warmup = true
	noStart := req(14, 0.5)
	noStart.Start = time.Time{}
	rs := []loadgen.Result{
		req(1, 1),     // outside, before
		req(9, 1),     // ends as the window starts: outside
		req(9, 1.5),   // cut at the start, mostly outside
		req(9.5, 2),   // cut at the start, mostly inside
		req(15, 3),    // inside, ends at 18
		req(11, 1),    // inside, ends at 12
		noStart,       // inside, timed from Intended
		warm, dropped, // never counted
		req(19, 1.5), // cut at the end, mostly inside
		req(19.5, 2), // cut at the end, mostly outside
		req(20, 1),   // starts as the window ends: outside
		req(25, 1),   // outside, after
	}
	q, err := loadresult.CountWindow(results(rs), at(10), at(20))
	if err != nil {
		t.Fatal(err)
	}
	want := loadresult.Window{Count: 5, EdgeCounted: 2, Before: 1, After: 1, Outside: 4, Warmup: 1, Dropped: 1,
		Latencies: []int64{2e9, 1e9, 5e8, 3e9, 15e8}} // by end: 11.5, 12, 14.5, 18, 20.5
	if q.Count != want.Count || q.EdgeCounted != want.EdgeCounted || q.Before != want.Before || q.After != want.After ||
		q.Outside != want.Outside || q.Warmup != want.Warmup || q.Dropped != want.Dropped || !slices.Equal(q.Latencies, want.Latencies) {
		t.Errorf("CountWindow = %+v\nwant %+v", q, want)
	}
	_, err = loadresult.CountWindow(results([]loadgen.Result{req(1, 1), warm}), at(10), at(20))
	if err == nil || !strings.Contains(err.Error(), "no result lies inside the recording") {
		t.Errorf("nothing inside: error %v", err)
	}
}

func TestCountWindowDecodeError(t *testing.T) {
	_, err := loadresult.CountWindow(loadgen.NewDecoder(strings.NewReader("{\"seq\": \"x\"}\n")), t0, t0.Add(time.Second))
	if err == nil || !strings.Contains(err.Error(), "results line 1") {
		t.Errorf("error %v, want one naming the line", err)
	}
}
