package triage

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/triage/promtest"
)

// TestPrometheus runs triage against a real Prometheus holding the known
// series of promtest.LocalFleet and promtest.SharedFleet.
func TestPrometheus(t *testing.T) {
	t.Parallel()
	testPrometheus(t, promtest.Replay(t, "known", promtest.Known()))
}

// TestPrometheusLive runs the same checks against a real Prometheus
// started on the same series: the answers TestPrometheus replays are
// still what Prometheus says.
func TestPrometheusLive(t *testing.T) {
	tier.Busy(t)
	testPrometheus(t, promtest.Start(t, promtest.Known()))
}

func testPrometheus(t *testing.T, base string) {
	t0 := promtest.T0
	cfg := func(job string, d time.Duration) Config {
		return Config{URL: base, Job: job, Start: t0, End: t0.Add(d), Threshold: 50 * time.Millisecond}
	}
	ctx := context.Background()

	t.Run("local", func(t *testing.T) {
		r, err := Run(ctx, cfg("local", 6*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := Verdict{Scope: "local", Instance: "b:8080", DBPath: "all-requests", Dependency: DepHost, Period: time.Hour, Cause: "throttled"}
		checkVerdict(t, r, want)
		b := r.instance("b:8080")
		if len(b.Bad) != 12 || r.Steps != 360 || r.When.ByMinute[0] != 6 || r.When.ByMinute[1] != 6 {
			t.Errorf("b: %d bad steps of %d, by minute :00 %d :01 %d; want 12 of 360, 6 and 6", len(b.Bad), r.Steps, r.When.ByMinute[0], r.When.ByMinute[1])
		}
		if !r.When.Phase.Equal(t0) {
			t.Errorf("phase %v, want %v", r.When.Phase, t0)
		}
		th := b.Host[Throttled]
		if !th.Rose || th.Bad < 2.9 || th.Bad > 3.1 || th.Good > 0.01 {
			t.Errorf("throttled evidence %+v, want 3 s per bad step and 0 per good one", th)
		}
		if a := r.instance("a:8080"); len(a.Bad) != 0 {
			t.Errorf("a:8080 has bad steps %v", a.Bad)
		}
		if len(r.Warnings) != 0 {
			t.Errorf("warnings: %q", r.Warnings)
		}
	})
	t.Run("shared", func(t *testing.T) {
		r, err := Run(ctx, cfg("shared", 2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, r, Verdict{Scope: "shared", DBPath: "db-only", Dependency: DepDatabase})
		if r.Scope.Shared != len(promtest.SharedBadMinutes) || r.Scope.Local != 0 {
			t.Errorf("scope evidence %+v, want %d shared steps", r.Scope, len(promtest.SharedBadMinutes))
		}
		for i, b := range r.BadSteps {
			if b.Index != promtest.SharedBadMinutes[i] || len(b.Bad) != 3 {
				t.Errorf("bad step %d = %+v, want minute %d with 3 instances", i, b, promtest.SharedBadMinutes[i])
			}
		}
		if h := r.instance("a:8080").Host[Steal]; !h.Absent {
			t.Errorf("steal evidence %+v, want absent", h)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		r, err := Run(ctx, cfg("stopped", 4*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, r, Verdict{Scope: "local", Instance: "c:8080", DBPath: "all-requests", Dependency: DepHost, Period: time.Hour, Cause: "stalled"})
		c := r.instance("c:8080")
		if c.DataSteps != 4*(60-2) || len(c.Bad) != 4 || c.Bad[0] != 32 {
			t.Errorf("c:8080: %d steps with data, bad steps %v; want 232 and [32 92 152 212]", c.DataSteps, c.Bad)
		}
		if st := c.Host[Stall]; !st.Rose || st.Bad < 119 || st.Bad > 121 {
			t.Errorf("stall evidence %+v, want 120 s in each step after a gap", st)
		}
	})
	t.Run("held", func(t *testing.T) {
		c := cfg("held", 2*time.Hour)
		c.Signal, c.Threshold = "request", 300*time.Millisecond
		r, err := Run(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, r, Verdict{Scope: "local", Instance: "c:8080", DBPath: "all-requests", Dependency: DepHost, Cause: "stalled"})
		ir := r.instance("c:8080")
		if len(ir.Held) != 2 || len(ir.Bad) != 2 || ir.Held[0] != 30 || ir.Held[1] != 90 {
			t.Errorf("c:8080: bad %v, held %v; want both [30 90]", ir.Bad, ir.Held)
		}
		if !strings.Contains(r.Verdict.Line, "2 of them held") || r.DBPath.Held != 2 {
			t.Errorf("verdict %q, DB path %+v: want the held steps named", r.Verdict.Line, r.DBPath)
		}
		if len(r.Warnings) != 0 {
			t.Errorf("warnings: %q", r.Warnings)
		}
		// The DB-call p95: a 3 s stop in a minute is too short to bring a
		// p95 over 300 ms however its calls were timed (it counts from
		// 300 ms + 5 % of 60 s = 3.3 s): none, and no warning.
		db := cfg("held", 2*time.Hour)
		db.Threshold = 300 * time.Millisecond
		if r, err := Run(ctx, db); err != nil || r.Verdict.Scope != "none" || len(r.Warnings) != 0 {
			t.Errorf("DB-call signal: %v, scope %q, warnings %q; want none and no warning", err, r.Verdict.Scope, r.Warnings)
		}
	})
	t.Run("threshold off a boundary", func(t *testing.T) {
		c := cfg("local", 6*time.Hour)
		c.Threshold = 45 * time.Millisecond
		r, err := Run(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "nearest: 40ms and 50ms") {
			t.Errorf("warnings %q", r.Warnings)
		}
	})
	t.Run("request signal and route", func(t *testing.T) {
		c := cfg("local", 6*time.Hour)
		c.Signal, c.Route = "request", "/orders"
		r, err := Run(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, r, Verdict{Scope: "local", Instance: "b:8080", DBPath: "all-requests", Dependency: DepHost, Period: time.Hour, Cause: "throttled"})
		if !strings.Contains(r.Queries[0], `histogram_quantile(0.99, sum by (job, instance, le) (clamp_min(last_over_time(latscope_request_duration_seconds_bucket{job="local",route="/orders"}[1m]) - last_over_time(latscope_request_duration_seconds_bucket{job="local",route="/orders"}[10m] offset 1m), 0)))`) {
			t.Errorf("signal query %s", r.Queries[0])
		}
	})
	t.Run("all jobs", func(t *testing.T) {
		r, err := Run(ctx, cfg("", 2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Instances) != 12 || r.Instances[0].Name != "held/a:8080" || r.Instances[11].Name != "stopped/c:8080" {
			t.Errorf("%d instances, first %q", len(r.Instances), r.Instances[0].Name)
		}
	})
	t.Run("unknown route", func(t *testing.T) {
		c := cfg("local", time.Hour)
		c.Route = "/nosuch"
		_, err := Run(ctx, c)
		if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), `job="local" route="/nosuch"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown job", func(t *testing.T) {
		_, err := Run(ctx, cfg("nosuch", time.Hour))
		if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), `job="nosuch" between 2026-11-02T00:00:00Z and 2026-11-02T01:00:00Z`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad query", func(t *testing.T) {
		f, err := newFetcher(cfg("local", time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.query(ctx, "sum((")
		if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "(query: sum(()") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("auth", func(t *testing.T) {
		proxy := authProxy(t, base)
		for _, tc := range []struct {
			name              string
			token, user, pass string
			ok                bool
		}{
			{"no credentials", "", "", "", false},
			{"wrong token", "nope", "", "", false},
			{"bearer token", "s3cret", "", "", true},
			{"basic auth", "", "ops", "pa55", true},
			{"wrong password", "", "ops", "x", false},
		} {
			c := cfg("local", time.Hour)
			c.URL, c.BearerToken, c.Username, c.Password = proxy, tc.token, tc.user, tc.pass
			_, err := Run(ctx, c)
			if tc.ok && err != nil || !tc.ok && (!errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "HTTP 401")) {
				t.Errorf("%s: err = %v", tc.name, err)
			}
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c := cfg("local", time.Hour)
		c.URL = "http://" + addr
		_, err = Run(ctx, c)
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not prometheus", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		c := cfg("local", time.Hour)
		c.URL = srv.URL
		if _, err := Run(ctx, c); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "HTTP 404") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestPrometheusWarnings checks that warnings in an API answer reach the
// report (a real Prometheus 2.42 gives none for these queries, so a stub
// answers here).
func TestPrometheusWarnings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/values") {
			w.Write([]byte(`{"status":"success","data":[]}`))
			return
		}
		body := `{"status":"success","warnings":["partial data: store b unavailable"],"data":{"resultType":"matrix","result":[
			{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"],[120,"0.09"]]},
			{"metric":{"job":"j","instance":"b"},"values":[[60,"0.01"],[120,"0.01"]]}]}}`
		if r.ParseForm() == nil && strings.Contains(r.Form.Get("query"), "_count") {
			w.Write(promtest.NoResult(body)) // no counts: every step counts
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(120, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) == 0 || !strings.HasPrefix(r.Warnings[0], "Prometheus: partial data: store b unavailable (query: histogram_quantile(") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if r.Verdict.Scope != "local" || r.Verdict.Instance != "a" {
		t.Errorf("verdict %+v", r.Verdict)
	}
}

func checkVerdict(t *testing.T, r *Report, want Verdict) {
	t.Helper()
	got := r.Verdict
	got.Line, got.Next, got.Rule = "", "", ""
	if got != want {
		t.Errorf("verdict %+v, want %+v\nline: %s\nwarnings: %q", got, want, r.Verdict.Line, r.Warnings)
	}
}

// authProxy serves base behind a check of "Bearer s3cret" or basic auth
// ops:pa55, answering 401 otherwise.
func authProxy(t *testing.T, base string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, basic := r.BasicAuth()
		if r.Header.Get("Authorization") == "Bearer s3cret" || basic && user == "ops" && pass == "pa55" {
			r.Header.Del("Authorization")
			rp.ServeHTTP(w, r)
			return
		}
		once.Do(func() {})
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
