package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/internal/triage/promtest"
)

// matrixAnswer is a range query's answer with two instances, a bad at
// 120 s.
const matrixAnswer = `{"status":"success","data":{"resultType":"matrix","result":[
	{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"],[120,"0.09"]]},
	{"metric":{"job":"j","instance":"b"},"values":[[60,"0.01"],[120,"0.01"]]}]}}`

// TestRedirectKeepsCredentials checks that a redirect to another host
// (here another port) does not carry the bearer token or the basic-auth
// password there, while a redirect on the same host does.
func TestRedirectKeepsCredentials(t *testing.T) {
	var mu sync.Mutex
	var seen []string // Authorization headers the other host saw
	methods := map[string]bool{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		if !strings.HasSuffix(r.URL.Path, "/values") { // the label values are a GET
			methods[r.Method] = true
		}
		mu.Unlock()
		promtest.Stub(matrixAnswer)(w, r)
	}))
	defer other.Close()
	var sameAuth []string // Authorization headers on the same host's redirect target
	named := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/moved/") {
			mu.Lock()
			sameAuth = append(sameAuth, r.Header.Get("Authorization"))
			mu.Unlock()
			code := http.StatusTemporaryRedirect
			if r.URL.Query().Get("code") == "302" {
				code = http.StatusFound
			}
			http.Redirect(w, r, other.URL+strings.TrimPrefix(r.URL.Path, "/moved"), code)
			return
		}
		http.Redirect(w, r, "/moved"+r.URL.Path+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect) // the same host first
	}))
	defer named.Close()
	for _, tc := range []struct {
		name, code string
		c          Config
	}{
		{"bearer token, 307", "307", Config{BearerToken: "s3cret"}},
		{"basic auth, 307", "307", Config{Username: "ops", Password: "pa55"}},
		{"bearer token, 302", "302", Config{BearerToken: "s3cret"}},
		{"basic auth, 302", "302", Config{Username: "ops", Password: "pa55"}},
	} {
		seen, sameAuth = nil, nil
		clear(methods)
		c := tc.c
		c.URL, c.Start, c.End = named.URL+"/?code="+tc.code, time.Unix(0, 0), time.Unix(120, 0)
		if _, err := Run(context.Background(), c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(seen) == 0 || len(sameAuth) == 0 {
			t.Fatalf("%s: the redirects were not followed: %d on the same host, %d on the other", tc.name, len(sameAuth), len(seen))
		}
		if want := map[string]string{"307": "POST", "302": "GET"}[tc.code]; len(methods) != 1 || !methods[want] {
			t.Errorf("%s: the other host saw %v, want %s only", tc.name, methods, want)
		}
		for _, a := range sameAuth {
			if a == "" {
				t.Errorf("%s: the same host's redirect target got no credentials", tc.name)
			}
		}
		for _, a := range seen {
			if a != "" {
				t.Errorf("%s: the other host got the credentials", tc.name)
			}
		}
	}
}

// TestErrorsRedactPassword checks that a password in the Prometheus URL
// never reaches an error.
func TestErrorsRedactPassword(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := dead.Listener.Addr().String()
	dead.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer refuse.Close()
	notProm := httptest.NewServer(http.NotFoundHandler())
	defer notProm.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"error","errorType":"internal","error":"boom"}`))
	}))
	defer failing.Close()
	withPW := func(base string) string { return strings.Replace(base, "http://", "http://ops:hunter2@", 1) }
	for _, u := range []string{
		withPW("http://" + deadAddr),
		withPW(refuse.URL),
		withPW(notProm.URL),
		withPW(failing.URL),
		"http://ops:hunter2@127.0.0.1:99999/",
		"http://ops:hunter2@[::1/",
	} {
		_, err := Run(context.Background(), Config{URL: u, Start: time.Unix(0, 0), End: time.Unix(120, 0)})
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "ops:xxxxx@") {
			t.Errorf("%s: err = %v; want one naming the URL without its password", strings.Replace(u, "hunter2", "PW", 1), err)
		}
	}
}

// TestErrorEscapesControlCharacters checks that Prometheus's own error
// message reaches the error escaped.
func TestErrorEscapesControlCharacters(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"status":"error","errorType":"bad\u001b[2Jdata","error":"parse error\r\nverdict: forged \u001b]0;x\u0007"}`))
	}))
	defer srv.Close()
	_, err := Run(context.Background(), Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(120, 0)})
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\r\n\x07") || !strings.Contains(err.Error(), `parse error\r\nverdict: forged`) {
		t.Errorf("err = %q", err)
	}
}

// TestResponseCap checks that an endless answer stops at the cap with one
// line naming the URL and the cap.
func TestResponseCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[`))
		chunk := []byte(strings.Repeat(`{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"]]},`, 1000))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(120, 0), MaxResponseBytes: 1 << 20})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "1 MiB") {
			t.Errorf("err = %v; want ErrTooLarge naming %s and 1 MiB", err, srv.URL)
		} else {
			t.Log(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an endless answer was read for 20 s")
	}
	if DefaultMaxResponseBytes != 64<<20 {
		t.Errorf("DefaultMaxResponseBytes = %d", DefaultMaxResponseBytes)
	}
}

// TestNonFiniteSamples checks that NaN and ±Inf samples, as Prometheus
// writes them, are "no value" everywhere: not bad, not the worst (and in
// the writers, triagereport's TestNonFiniteSamples: null in the JSON, no
// bar in the HTML).
func TestNonFiniteSamples(t *testing.T) {
	srv := httptest.NewServer(promtest.Stub(`{"status":"success","data":{"resultType":"matrix","result":[
		{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"],[120,"+Inf"],[180,"0.09"],[240,"-Inf"],[300,"NaN"],[360,"0.01"],[420,"0.01"]]},
		{"metric":{"job":"j","instance":"b"},"values":[[60,"0.01"],[120,"0.01"],[180,"0.01"],[240,"0.01"],[300,"0.01"],[360,"0.01"],[420,"1e308"]]}]}}`))
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(420, 0)})
	if err != nil {
		t.Fatal(err)
	}
	a := r.instance("a")
	if a.DataSteps != 4 || len(a.Bad) != 1 || a.Worst != 0.09 {
		t.Errorf("a: %d steps with data, bad %v, worst %v; want 4, one bad step, 0.09", a.DataSteps, a.Bad, a.Worst)
	}
	for _, ir := range r.Instances {
		for _, i := range ir.Bad {
			if math.IsNaN(ir.Signal[i]) || math.IsInf(ir.Signal[i], 0) {
				t.Errorf("%s: step %d is bad without a finite signal", ir.Name, i)
			}
		}
		if math.IsInf(ir.Worst, 0) || math.IsInf(ir.Baseline, 0) {
			t.Errorf("%s: worst %v, baseline %v", ir.Name, ir.Worst, ir.Baseline)
		}
	}
}

// TestRangeLimits checks that ranges and steps whose arithmetic would
// overflow a time.Duration, or that start before 1970, are refused before
// any query.
func TestRangeLimits(t *testing.T) {
	now := time.Date(2026, 12, 4, 6, 30, 0, 0, time.UTC)
	for _, c := range []Config{
		{Start: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), End: now, Step: 8760 * time.Hour},
		{Start: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), End: time.Date(1970, 1, 5, 0, 0, 0, 0, time.UTC), Step: time.Hour},
		{Start: time.Date(2499, 12, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC), Step: time.Hour},
		{Start: now.Add(-1000 * 24 * time.Hour), End: now, Step: 500 * 24 * time.Hour},
		{Start: time.Unix(0, 0), End: time.Unix(0, 0).Add(1 << 62), Step: 1 << 61},
	} {
		c.URL = "http://127.0.0.1:1"
		_, err := Run(context.Background(), c)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%v to %v by %v: err = %v, want ErrConfig", c.Start, c.End, c.Step, err)
		}
	}
}

// TestWarningsSummed checks that a per-instance warning given for many
// instances is one line with the count and the first instances, in the
// text and in the JSON, that the JSON counts them all, and that hidden
// stalls on every instance are one warning for the fleet.
func TestWarningsSummed(t *testing.T) {
	const n = 20000
	in := Input{Start: time.Unix(0, 0), Step: time.Minute, Steps: 6}
	for i := range n {
		s := InstanceSeries{Name: fmt.Sprintf("10.0.%d.%d:8080", i/256, i%256), Signal: []float64{.01, .09, math.NaN(), math.NaN(), math.NaN(), math.NaN()}}
		s.Host[Stall] = []float64{4, 0, 0, 0, 0, 0} // stalled 4 s at once in a good step (a stall counts from 3.05 s: 50ms + 5 % of a minute)
		s.Stalls = []float64{1, 1, 1, 1, 1, 1}
		in.Instances = append(in.Instances, s)
	}
	r := Analyze(in, Params{Threshold: 50 * time.Millisecond})
	if len(r.Warnings) != 2 || r.WarningsTotal != n+1 {
		t.Fatalf("%d warning lines, %d in all; want 2 and %d: %q", len(r.Warnings), r.WarningsTotal, n+1, r.Warnings)
	}
	if !strings.HasPrefix(r.Warnings[0], "the stall probe woke 3.05s or more late in 20000 step(s) that were not bad, on 20000 instance(s): 10.0.0.0:8080 in 1 (most 4.00 s at 00:00:00 UTC); 10.0.0.1:8080 in 1") ||
		!strings.HasPrefix(r.Warnings[1], "20000 instances have fewer than 3 good steps") ||
		!strings.HasSuffix(r.Warnings[1], "(first: 10.0.0.0:8080, 10.0.0.1:8080, 10.0.0.2:8080, …)") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// TestPrometheusWarningsBounded checks that Prometheus's warnings are
// listed once each, however many queries had them, and at most
// maxPromWarnings of them.
func TestPrometheusWarningsBounded(t *testing.T) {
	ws := []string{fmt.Sprintf("%q", strings.Repeat("é", 2000))}
	for i := range 50 {
		ws = append(ws, fmt.Sprintf("%q", fmt.Sprintf("store %d unavailable", i)))
	}
	body := strings.Replace(matrixAnswer, `"status":"success",`, `"status":"success","warnings":[`+strings.Join(ws, ",")+`],`, 1)
	srv := httptest.NewServer(promtest.Stub(body))
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Start: time.Unix(0, 0), End: time.Unix(120, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var prom []string
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "Prometheus: ") {
			prom = append(prom, w)
		}
	}
	q := len(r.Queries)
	if len(prom) != maxPromWarnings+1 || r.WarningsTotal != 51*q+len(r.Warnings)-len(prom) {
		t.Fatalf("%d warning lines from Prometheus, %d in all over %d queries; want %d and %d", len(prom), r.WarningsTotal, q, maxPromWarnings+1, 51*q+len(r.Warnings)-len(prom))
	}
	if !strings.Contains(prom[0], fmt.Sprintf("; and %d more)", q-1)) || len(prom[0]) > maxWarningBytes+1000 || !utf8.ValidString(prom[0]) {
		t.Errorf("first warning (%d bytes) %q", len(prom[0]), prom[0])
	}
	if last := prom[len(prom)-1]; last != fmt.Sprintf("Prometheus: %d more warning(s) not listed (10 distinct ones are)", 41*q) {
		t.Errorf("last warning %q", last)
	}
}
