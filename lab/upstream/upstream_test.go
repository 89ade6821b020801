package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

func TestRequestDelay(t *testing.T) {
	tier.Timing(t)
	const def = 100 * time.Millisecond
	tests := []struct {
		target  string
		want    time.Duration
		wantErr bool
	}{
		{"/", def, false},
		{"/?ms=0", 0, false},
		{"/?ms=7", 7 * time.Millisecond, false},
		{"/x?a=b&ms=250", 250 * time.Millisecond, false},
		{"/?ms=-1", 0, true},
		{"/?ms=1.5", 0, true},
		{"/?ms=abc", 0, true},
		{"/?ms=99999999999", 0, true},
	}
	for _, tt := range tests {
		got, err := requestDelay(httptest.NewRequest("GET", tt.target, nil), def)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("requestDelay(%s) = %v, %v; want %v, error %v", tt.target, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzRequestDelay(f *testing.F) {
	for _, s := range []string{"", "0", "100", "-1", "1e3", "18446744073709551616", " 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ms string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = "ms=" + ms
		d, err := requestDelay(r, time.Second)
		if err == nil && d < 0 {
			t.Errorf("ms=%q: negative delay %v", ms, d)
		}
	})
}

// TestServerDelay checks that answers come no sooner than the delay. Only the
// lower bound is asserted: the timer guarantees it, a loaded machine does not
// guarantee any upper bound.
func TestServerDelay(t *testing.T) {
	tier.Timing(t)
	s, err := Start(t.Context(), Options{Delay: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		query    string
		atLeast  time.Duration
		wantCode int
	}{
		{"", 30 * time.Millisecond, 200},
		{"?ms=5", 5 * time.Millisecond, 200},
		{"?ms=60", 60 * time.Millisecond, 200},
		{"?ms=bad", 0, 400},
	}
	for _, tt := range tests {
		start := time.Now()
		resp, err := http.Get(s.URL() + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		elapsed := time.Since(start)
		if resp.StatusCode != tt.wantCode {
			t.Errorf("GET %s: status %d (%q), want %d", tt.query, resp.StatusCode, body, tt.wantCode)
		}
		if elapsed < tt.atLeast {
			t.Errorf("GET %s answered after %v, before the %v delay", tt.query, elapsed, tt.atLeast)
		}
		if tt.wantCode == 200 && string(body) != "ok\n" {
			t.Errorf("GET %s: body %q, want \"ok\\n\"", tt.query, body)
		}
	}
	if got := s.Served(); got != 3 {
		t.Errorf("Served() = %d, want 3", got)
	}
}

func TestDefaults(t *testing.T) {
	if h := New(Options{}); h.delay != DefaultDelay {
		t.Errorf("New(Options{}).delay = %v, want %v", h.delay, DefaultDelay)
	}
	s, err := Start(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ip := s.Addr().String(); ip[:10] != "127.0.0.1:" {
		t.Errorf("listening on %s, want 127.0.0.1", ip)
	}
}

func TestCloseAndCancel(t *testing.T) {
	tier.Timing(t)
	ctx, cancel := context.WithCancel(t.Context())
	s, err := Start(ctx, Options{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(s.URL())
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still answers after its context was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 2; i++ {
		if err := s.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
}

func TestStartBadAddr(t *testing.T) {
	_, err := Start(t.Context(), Options{Addr: "256.0.0.1:0"})
	if err == nil {
		t.Fatal("Start on 256.0.0.1 succeeded")
	}
	t.Log(err)
}
