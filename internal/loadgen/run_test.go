package loadgen

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

// sleepHandler answers "ok" after d, or gives up when the client goes away.
func sleepHandler(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "ok")
	}
}

// server starts an httptest server on 127.0.0.1 for the test.
func server(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// collect runs opts and returns the results it streamed.
func collect(t *testing.T, ctx context.Context, opts Options) ([]Result, error) {
	t.Helper()
	var rs []Result
	err := Run(ctx, opts, func(r Result) { rs = append(rs, r) })
	return rs, err
}

func report(rs []Result) *Report {
	var rp Report
	for i := range rs {
		rp.Add(&rs[i])
	}
	rp.Close()
	return &rp
}

// TestRunClosedLittlesLaw checks the closed model against Little's law:
// with N clients always either waiting for an answer or thinking,
// rps = N / (mean latency + think).
//
// Over the window T (first intended send to last completion of a measured
// result) each client's measured requests form one chain, so the sum of
// (latency + think) over a client's requests is T minus the part of the
// window before its first and after its last request, plus one think, less
// the few microseconds between an answer and the next send. The part left
// out is under one latency at each edge (a client's first measured request
// straddles the end of the warm-up, its last one the end of the run). So
// rps / (N / (mean + think)) lies within 2*(max latency + think)/T of 1,
// plus 2% for the per-request gaps and rounding; we assert that bound,
// computed from the run's own numbers.
func TestRunClosedLittlesLaw(t *testing.T) {
	tier.Timing(t)
	const clients = 10
	srv := server(t, sleepHandler(20*time.Millisecond))
	for _, think := range []time.Duration{0, 10 * time.Millisecond} {
		t.Run("think="+think.String(), func(t *testing.T) {
			opts := DefaultOptions
			opts.URL, opts.Clients, opts.Think = srv.URL, clients, think
			opts.Warmup, opts.Duration = 200*time.Millisecond, 800*time.Millisecond
			rs, err := collect(t, context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			rp := report(rs)
			if rp.Requests == 0 || rp.Warmup == 0 || rp.Errors != 0 {
				t.Fatalf("requests %d, warm-up %d, errors %d (%v): want some measured, some warm-up, no errors", rp.Requests, rp.Warmup, rp.Errors, rp.TopErrors)
			}
			predicted := clients / (rp.Latency.Mean + think).Seconds()
			tol := 2*(rp.Latency.Max+think).Seconds()/rp.Window.Seconds() + 0.02
			if rel := math.Abs(rp.RPS/predicted - 1); rel > tol {
				t.Errorf("rps %.1f vs clients/(mean+think) = %d/(%v+%v) = %.1f: off by %.1f%%, want within %.1f%%",
					rp.RPS, clients, rp.Latency.Mean, think, predicted, 100*rel, 100*tol)
			}
			t.Logf("rps %.1f, predicted %.1f, mean %v, max %v, window %v, tolerance %.1f%%", rp.RPS, predicted, rp.Latency.Mean, rp.Latency.Max, rp.Window, 100*tol)
			checkClosedResults(t, rs, clients)
		})
	}
}

// checkClosedResults: every client appears, sequence numbers are unique,
// and warm-up results all completed before the measured ones.
func checkClosedResults(t *testing.T, rs []Result, clients int) {
	t.Helper()
	seen := map[uint64]bool{}
	perClient := make([]int, clients)
	var lastWarm, firstMeasured time.Time
	for _, r := range rs {
		if seen[r.Seq] {
			t.Errorf("seq %d twice", r.Seq)
		}
		seen[r.Seq] = true
		perClient[r.Client]++
		if r.Start.Before(r.Intended) {
			t.Errorf("seq %d started %v before it was due", r.Seq, r.Intended.Sub(r.Start))
		}
		switch end := r.End(); {
		case r.Warmup && end.After(lastWarm):
			lastWarm = end
		case !r.Warmup && (firstMeasured.IsZero() || end.Before(firstMeasured)):
			firstMeasured = end
		}
	}
	for c, n := range perClient {
		if n == 0 {
			t.Errorf("client %d sent nothing", c)
		}
	}
	if lastWarm.After(firstMeasured) {
		t.Errorf("a warm-up result completed %v after the first measured one", lastWarm.Sub(firstMeasured))
	}
}

// TestRunOpenRate: at 200/s for 1 s exactly 200 requests are due, at
// exactly 5 ms intervals, and all are sent.
func TestRunOpenRate(t *testing.T) {
	tier.Timing(t)
	srv := server(t, sleepHandler(time.Millisecond))
	opts := DefaultOptions
	opts.URL, opts.Rate, opts.MaxInFlight = srv.URL, 200, 100
	opts.Warmup, opts.Duration = 0, time.Second
	rs, err := collect(t, context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rp := report(rs)
	if rp.Requests != 200 || rp.Dropped != 0 || rp.Errors != 0 {
		t.Fatalf("requests %d, dropped %d, errors %d; want 200, 0, 0", rp.Requests, rp.Dropped, rp.Errors)
	}
	first := rp.Start
	for _, r := range rs {
		if want := first.Add(time.Duration(r.Seq) * 5 * time.Millisecond); !r.Intended.Equal(want) {
			t.Errorf("seq %d intended at +%v, want +%v", r.Seq, r.Intended.Sub(first), want.Sub(first))
		}
	}
	// The window is 995 ms of arrivals plus the last latency (allow 100 ms).
	if rp.RPS < 200/1.095 || rp.RPS > 200/0.995 {
		t.Errorf("rps %.1f, want 200 over a window of 995 ms plus one latency", rp.RPS)
	}
}

// stallHandler answers at once, except that the first request arriving
// after the server has run for `after` starts a stall: it and every request
// arriving during the next `stall` wait for the stall to end.
type stallHandler struct {
	after, stall time.Duration
	mu           sync.Mutex
	first, until time.Time
}

func (h *stallHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	now := time.Now()
	if h.first.IsZero() {
		h.first = now
	}
	if h.until.IsZero() && now.Sub(h.first) >= h.after {
		h.until = now.Add(h.stall)
	}
	wait := time.Until(h.until)
	h.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
	io.WriteString(w, "ok")
}

// TestRunOpenStall: a 200 ms stall of the server shows in the latency of
// every request that was due during it, though only MaxInFlight of them
// were sent before it ended. Latency measured from the send would show only
// those few (coordinated omission).
func TestRunOpenStall(t *testing.T) {
	tier.Timing(t)
	const maxInFlight = 5
	srv := server(t, &stallHandler{after: 300 * time.Millisecond, stall: 200 * time.Millisecond})
	opts := DefaultOptions
	opts.URL, opts.Rate, opts.MaxInFlight = srv.URL, 200, maxInFlight
	opts.Warmup, opts.Duration = 0, time.Second
	rs, err := collect(t, context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rp := report(rs)
	fromIntended, fromStart := 0, 0
	var maxFromStart time.Duration
	var sendLat []time.Duration
	for _, r := range rs {
		sendLat = append(sendLat, r.End().Sub(r.Start))
		if r.Latency >= 100*time.Millisecond {
			fromIntended++
		}
		if d := r.End().Sub(r.Start); d >= 100*time.Millisecond {
			fromStart++
			maxFromStart = max(maxFromStart, d)
		}
	}
	slices.Sort(sendLat)
	t.Logf("late %d; latency ≥ 100 ms: %d from intended (max %v), %d from send (max %v); p90 %v from intended, %v from send",
		rp.Late, fromIntended, rp.Latency.Max, fromStart, maxFromStart, rp.Latency.P90, Percentile(sendLat, 90))
	if rp.Requests != 200 || rp.Dropped != 0 {
		t.Errorf("requests %d, dropped %d; want 200 sent late rather than dropped", rp.Requests, rp.Dropped)
	}
	if rp.Late == 0 {
		t.Errorf("late = 0, want the requests due while %d were stalled", maxInFlight)
	}
	// The requests due in the stall's first 100 ms (20 at 200/s, minus one
	// for where the stall begins) end after it, 100 ms or more after due.
	if fromIntended < 19 {
		t.Errorf("%d requests with latency ≥ 100 ms from their intended time, want ≥ 19", fromIntended)
	}
	if fromStart > maxInFlight {
		t.Errorf("%d requests ≥ 100 ms from their send, want ≤ %d (only that many were sent during the stall)", fromStart, maxInFlight)
	}
	if rp.Latency.Max < 200*time.Millisecond {
		t.Errorf("max latency %v, want ≥ the 200 ms stall", rp.Latency.Max)
	}
}

// TestRunOpenDropped: with one slot and 300 ms answers, 2 of the 50
// requests due in 500 ms are sent and the rest are dropped at the end.
func TestRunOpenDropped(t *testing.T) {
	tier.Timing(t)
	srv := server(t, sleepHandler(300*time.Millisecond))
	opts := DefaultOptions
	opts.URL, opts.Rate, opts.MaxInFlight = srv.URL, 100, 1
	opts.Warmup, opts.Duration = 0, 500*time.Millisecond
	rs, err := collect(t, context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rp := report(rs)
	if rp.Requests+rp.Dropped != 50 || rp.Requests != 2 || rp.Late != 1 {
		t.Errorf("requests %d (late %d) + dropped %d; want 2 (1 late) + 48 = 50 due", rp.Requests, rp.Late, rp.Dropped)
	}
	for _, r := range rs {
		if r.Dropped && (r.Client != -1 || !r.Start.IsZero()) {
			t.Errorf("dropped result %+v: want client -1 and no start", r)
		}
	}
}

// TestRunCancel: cancelling stops both models promptly, aborted requests are
// not reported, and Run says why it stopped.
func TestRunCancel(t *testing.T) {
	tier.Timing(t)
	srv := server(t, sleepHandler(time.Minute))
	for _, rate := range []float64{0, 50} {
		opts := DefaultOptions
		opts.URL, opts.Rate, opts.Clients = srv.URL, rate, 3
		opts.Duration = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan struct{})
		var rs []Result
		var err error
		go func() { rs, err = collect(t, ctx, opts); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("rate %v: Run still running 10 s after cancellation", rate)
		}
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || len(rs) != 0 {
			t.Errorf("rate %v: Run = %v with %d results; want context.DeadlineExceeded and none", rate, err, len(rs))
		}
	}
}

// TestRunErrors: timeouts and error statuses become Result.Error.
func TestRunErrors(t *testing.T) {
	tier.Timing(t)
	slow := server(t, sleepHandler(time.Second))
	unavailable := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	// Only the timeout case has a short timeout: on a loaded machine a dial
	// or an answer can take longer than 30 ms.
	tests := []struct {
		name, url, want string
		code            int
		timeout         time.Duration
	}{
		{"timeout", slow.URL, "context deadline exceeded", 0, 30 * time.Millisecond},
		{"status", unavailable.URL, "503 Service Unavailable", 503, 10 * time.Second},
		{"refused", "http://127.0.0.1:1/", "connect: connection refused", 0, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions
			opts.URL, opts.Clients, opts.Timeout = tt.url, 2, tt.timeout
			opts.Warmup, opts.Duration = 0, 100*time.Millisecond
			rs, err := collect(t, context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			rp := report(rs)
			if rp.Requests == 0 || rp.Errors != rp.Requests || rp.Codes[tt.code] != rp.Requests {
				t.Fatalf("requests %d, errors %d, codes %v; want all errors with code %d", rp.Requests, rp.Errors, rp.Codes, tt.code)
			}
			if !strings.Contains(rp.TopErrors[0].Message, tt.want) || rp.DistinctErrors != 1 {
				t.Errorf("errors %v, want one message containing %q", rp.TopErrors, tt.want)
			}
		})
	}
}

// TestRunRequest: method, body and headers (Host too) reach the server,
// over one keep-alive connection per client.
func TestRunRequest(t *testing.T) {
	tier.Timing(t)
	const clients = 4
	var bad atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || string(body) != "hi" || r.Header.Get("X-Test") != "yes" || r.Host != "example.test" {
			bad.Store(r.Method + " " + string(body) + " " + r.Header.Get("X-Test") + " " + r.Host)
		}
		io.WriteString(w, "hello")
	}))
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	opts := DefaultOptions
	opts.URL, opts.Clients, opts.Method, opts.Body = srv.URL, clients, "POST", []byte("hi")
	opts.Header = http.Header{"X-Test": {"yes"}, "Host": {"example.test"}}
	opts.Warmup, opts.Duration = 0, 200*time.Millisecond
	rs, err := collect(t, context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rp := report(rs)
	if v := bad.Load(); v != nil {
		t.Errorf("server saw %q, want POST hi yes example.test", v)
	}
	if rp.Errors != 0 || rp.BytesIn != int64(5*rp.Requests) {
		t.Errorf("errors %d, bytes in %d for %d requests; want 0 and 5 each", rp.Errors, rp.BytesIn, rp.Requests)
	}
	// Keep-alive: about one connection per client. net/http returns a
	// connection to the idle pool from its readLoop after the body is read,
	// so a client's next request can race it and dial once more; a
	// connection per request would mean keep-alive is off.
	if n := conns.Load(); n > 3*clients || n >= int64(rp.Requests) {
		t.Errorf("%d connections for %d clients and %d requests, want about one per client (keep-alive)", n, clients, rp.Requests)
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := DefaultOptions
	ok.URL = "http://127.0.0.1:8080/x"
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" = valid
	}{
		{"defaults", func(o *Options) {}, ""},
		{"open", func(o *Options) { o.Rate = 10 }, ""},
		{"empty method is GET", func(o *Options) { o.Method = "" }, ""},
		{"port 65535", func(o *Options) { o.URL = "https://[::1]:65535/" }, ""},
		{"header", func(o *Options) { o.Header = http.Header{"X-A": {"a\tb"}, "Host": {"example.test:80"}} }, ""},
		{"limits", func(o *Options) { o.Rate, o.Clients, o.MaxInFlight = MaxRate, MaxClients, MaxInFlightLimit }, ""},
		{"longest run", func(o *Options) { o.Warmup, o.Duration = time.Hour, never-time.Hour }, ""},

		{"no URL", func(o *Options) { o.URL = "" }, `URL "": scheme must be http:// or https://`},
		{"ftp", func(o *Options) { o.URL = "ftp://127.0.0.1/" }, "scheme must be http:// or https://"},
		{"no scheme", func(o *Options) { o.URL = "127.0.0.1:8080" }, "URL"},
		{"no host", func(o *Options) { o.URL = "http:///x" }, "no host"},
		{"port only", func(o *Options) { o.URL = "http://:8080/" }, "no host"},
		{"port 0", func(o *Options) { o.URL = "http://127.0.0.1:0/" }, "port 0: want 1 to 65535"},
		{"port 99999", func(o *Options) { o.URL = "http://127.0.0.1:99999/" }, "port 99999: want 1 to 65535"},
		{"port not a number", func(o *Options) { o.URL = "http://127.0.0.1:http/" }, "invalid port"},
		{"method", func(o *Options) { o.Method = "BAD METHOD" }, `Method "BAD METHOD"`},
		{"header CRLF", func(o *Options) { o.Header = http.Header{"X-A": {"a\r\nX-B: b"}} }, "control character U+000D"},
		{"header LF", func(o *Options) { o.Header = http.Header{"X-A": {"a\nb"}} }, "control character U+000A"},
		{"header NUL", func(o *Options) { o.Header = http.Header{"X-A": {"a\x00"}} }, "control character U+0000"},
		{"header name", func(o *Options) { o.Header = http.Header{"Bad Name": {"x"}} }, `Header "Bad Name": the name is not a token`},
		{"header empty name", func(o *Options) { o.Header = http.Header{"": {"x"}} }, "the name is not a token"},
		{"Host CRLF", func(o *Options) { o.Header = http.Header{"Host": {"a\r\n"}} }, `Header "Host: a\r\n"`},
		{"clients 0", func(o *Options) { o.Clients = 0 }, "Clients 0: want 1 to 100000"},
		{"clients 0, open", func(o *Options) { o.Rate, o.Clients = 10, 0 }, "Clients 0"},
		{"clients negative", func(o *Options) { o.Clients = -3 }, "Clients -3"},
		{"clients huge", func(o *Options) { o.Clients = MaxClients + 1 }, "Clients 100001"},
		{"rate NaN", func(o *Options) { o.Rate = math.NaN() }, "Rate NaN"},
		{"rate +Inf", func(o *Options) { o.Rate = math.Inf(1) }, "Rate +Inf"},
		{"rate -Inf", func(o *Options) { o.Rate = math.Inf(-1) }, "Rate -Inf"},
		{"rate negative", func(o *Options) { o.Rate = -1 }, "Rate -1"},
		{"rate huge", func(o *Options) { o.Rate = 2e9 }, "Rate 2e+09"},
		{"in flight 0, open", func(o *Options) { o.Rate, o.MaxInFlight = 5, 0 }, "MaxInFlight 0"},
		{"in flight 0, closed", func(o *Options) { o.MaxInFlight = 0 }, "MaxInFlight 0"},
		{"in flight negative", func(o *Options) { o.MaxInFlight = -1 }, "MaxInFlight -1"},
		{"in flight huge", func(o *Options) { o.MaxInFlight = MaxInFlightLimit + 1 }, "MaxInFlight 1000001"},
		{"duration 0", func(o *Options) { o.Duration = 0 }, "Duration 0s: want more than 0"},
		{"duration negative", func(o *Options) { o.Duration = -time.Second }, "Duration -1s"},
		{"warmup + duration overflows", func(o *Options) { o.Warmup, o.Duration = time.Hour, never-time.Hour+1 }, "Warmup + Duration exceeds"},
		{"warmup", func(o *Options) { o.Warmup = -time.Second }, "Warmup -1s"},
		{"timeout", func(o *Options) { o.Timeout = -1 }, "Timeout -1ns"},
		{"think", func(o *Options) { o.Think = -1 }, "Think -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.edit(&o)
			err := o.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
			if err == nil {
				return
			}
			if oe, ok := errors.AsType[*OptionError](err); !ok || !strings.Contains(err.Error(), "loadgen: "+oe.Option+" ") {
				t.Errorf("Validate() = %#v, want an *OptionError naming its option", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate() = %q, want one line", err)
			}
			if rerr := Run(context.Background(), o, nil); rerr == nil || rerr.Error() != err.Error() {
				t.Errorf("Run = %v, want the Validate error", rerr)
			}
		})
	}
}

// TestRunPacerNeverEnds: a pacer whose requests are all due at once still
// ends at the run's end in both models; the open model drops what the
// slots could not take.
func TestRunPacerNeverEnds(t *testing.T) {
	tier.Timing(t)
	srv := server(t, sleepHandler(time.Millisecond))
	for _, rate := range []float64{0, 1} {
		opts := DefaultOptions
		opts.URL, opts.Rate, opts.Clients, opts.MaxInFlight = srv.URL, rate, 2, 2
		opts.Warmup, opts.Duration = 0, 100*time.Millisecond
		opts.Pacer = PacerFunc(func(uint64, time.Duration) time.Duration { return 0 })
		var rp Report
		if err := Run(context.Background(), opts, func(r Result) { rp.Add(&r) }); err != nil {
			t.Fatal(err)
		}
		if rp.Requests == 0 || (rate > 0) != (rp.Dropped == maxDropped) {
			t.Errorf("rate %v: requests %d, dropped %d; want some sent, and %d dropped only in the open model", rate, rp.Requests, rp.Dropped, maxDropped)
		}
	}
}
