package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/triage/promtest"
)

// TestTriage runs `latscope triage` against a real Prometheus holding the
// known series of promtest (job "local": b:8080 throttled at :00 and :01
// of every hour; job "shared": all three instances slow together in the
// DB path only).
func TestTriage(t *testing.T) {
	// The answers a real Prometheus gave once (promtest.Replay; triage's
	// TestPrometheusLive checks them against a running one).
	base := promtest.Replay(t, "triage", promtest.Known())
	t0 := promtest.T0
	span := func(h int) []string {
		return []string{"--since", t0.Format(time.RFC3339), "--until", t0.Add(time.Duration(h) * time.Hour).Format(time.RFC3339)}
	}
	args := func(job string, h int, more ...string) []string {
		return append(append([]string{"triage", "--prometheus", base, "--job", job}, span(h)...), more...)
	}

	t.Run("text", func(t *testing.T) {
		stdout, stderr, err := runCLI(t, args("local", 6)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "internal", "report", "triagereport", "testdata", "local.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want) {
			t.Errorf("stdout differs from internal/report/triagereport/testdata/local.txt:\n%s", stdout)
		}
	})
	t.Run("json and html files", func(t *testing.T) {
		dir := t.TempDir()
		out, page := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.html")
		stdout, stderr, err := runCLI(t, args("local", 6, "--json", "-o", out, "--html", page)...)
		if err != nil || stdout != "" || stderr != "" {
			t.Fatalf("err %v, stdout %q, stderr %q", err, stdout, stderr)
		}
		v := readVerdict(t, out)
		if v.Scope != "local" || v.Instance != "b:8080" || v.DBPath != "all-requests" || v.PeriodS != 3600 || v.Cause != "throttled" {
			t.Errorf("verdict %+v", v)
		}
		h, err := os.ReadFile(page)
		if err != nil || strings.Count(string(h), `<svg class="timeline"`) != 3 {
			t.Errorf("HTML page: %v, %d timelines", err, strings.Count(string(h), `<svg class="timeline"`))
		}
	})
	t.Run("shared", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "s.json")
		if _, stderr, err := runCLI(t, args("shared", 2, "--json", "-o", out)...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if v := readVerdict(t, out); v.Scope != "shared" || v.DBPath != "db-only" || v.PeriodS != 0 {
			t.Errorf("verdict %+v", v)
		}
	})
	t.Run("off-boundary threshold warns", func(t *testing.T) {
		_, stderr, err := runCLI(t, args("local", 6, "--threshold", "45ms", "--json")...)
		if err != nil || !strings.Contains(stderr, "warning: threshold 45ms is not a bucket boundary (nearest: 40ms and 50ms)") {
			t.Errorf("err %v, stderr %q", err, stderr)
		}
	})

	dead := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	proxy := bearerProxy(t, base, "s3cret")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("token file", func(t *testing.T) {
		a := []string{"triage", "--prometheus", proxy, "--bearer-token-file", token, "--job", "shared", "--json"}
		if _, stderr, err := runCLI(t, append(a, span(2)...)...); err != nil {
			t.Errorf("%v\n%s", err, stderr)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown job", args("nosuch", 1), `latscope: triage: no latscope metrics for job="nosuch" between 2026-11-02T00:00:00Z and 2026-11-02T01:00:00Z: is the agent's Metrics option on and scraped?`},
		{"unreachable", []string{"triage", "--prometheus", dead, "--range", "1h"}, "cannot reach Prometheus at " + dead},
		{"no credentials", []string{"triage", "--prometheus", proxy, "--range", "1h"}, "Prometheus refused the credentials at " + proxy + " (HTTP 401 Unauthorized)"},
		{"no url", []string{"triage", "--range", "1h"}, "flag --prometheus is required"},
		{"bad step", []string{"triage", "--prometheus", base, "--step", "1500ms"}, "flag --step 1.5s: want whole seconds"},
		{"bad signal", []string{"triage", "--prometheus", base, "--signal", "cpu"}, `flag --signal "cpu": want db or request`},
		{"range and since", []string{"triage", "--prometheus", base, "--range", "1h", "--since", "-2h"}, "flag --range is the time ending now"},
		{"bad since", []string{"triage", "--prometheus", base, "--since", "yesterday"}, `flag --since: "yesterday": want RFC 3339`},
		{"bad range", []string{"triage", "--prometheus", base, "--range", "6 hours"}, `flag --range "6 hours"`},
		{"unknown flag", []string{"triage", "--prometheus", base, "--jbo", "x"}, "flag provided but not defined: -jbo"},
		{"missing token file", []string{"triage", "--prometheus", base, "--bearer-token-file", "/nonexistent/token"}, "flag --bearer-token-file: stat /nonexistent/token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runExit(t, tc.args...)
			line := oneLine(t, stderr)
			if code != 2 || !strings.Contains(line, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, line, tc.want)
			}
		})
	}
}

// triageVerdict is the verdict of the JSON output.
type triageVerdict struct {
	Scope, Instance, Cause string
	DBPath                 string  `json:"db_path"`
	PeriodS                float64 `json:"period_s"`
}

func readVerdict(t *testing.T, path string) triageVerdict {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Verdict triageVerdict }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.Verdict
}

// bearerProxy serves base behind a check of "Bearer token", answering 401
// otherwise.
func bearerProxy(t *testing.T, base, token string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTriageTimes(t *testing.T) {
	now := time.Date(2026, 12, 4, 6, 30, 0, 0, time.UTC)
	tests := []struct {
		args       []string
		start, end time.Time
	}{
		{nil, now.Add(-time.Hour), now},
		{[]string{"--range", "6h"}, now.Add(-6 * time.Hour), now},
		{[]string{"--range", "7d"}, now.Add(-7 * 24 * time.Hour), now},
		{[]string{"--since", "-2h"}, now.Add(-2 * time.Hour), now},
		{[]string{"--since", "-2h", "--until", "-1h"}, now.Add(-2 * time.Hour), now.Add(-time.Hour)},
		{[]string{"--since", "2026-12-03T00:00:00Z", "--until", "now"}, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), now},
	}
	for _, tt := range tests {
		o, err := parseTriage(io.Discard, append([]string{"--prometheus", "http://127.0.0.1:9090"}, tt.args...), now)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !o.c.Start.Equal(tt.start) || !o.c.End.Equal(tt.end) {
			t.Errorf("%q: %v to %v, want %v to %v", tt.args, o.c.Start, o.c.End, tt.start, tt.end)
		}
	}
	if _, err := parseTriage(io.Discard, []string{"--prometheus", "http://x", "--since", "-1h", "--until", "-2h"}, now); err == nil || !strings.Contains(err.Error(), "the end is not after the start") {
		t.Errorf("reversed range: %v", err)
	}
}

// FuzzParseWhen checks that --since/--until never panic and that what
// they accept lies at or before now when relative.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"now", "-2h", "-7d", "-1h30m", "2026-12-03T00:00:00Z", "2026-12-03T00:00:00+02:00", "-", "--1h", "-9999999999y", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 4, 6, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseWhen(s, now)
		if err == nil && strings.HasPrefix(s, "-") && got.After(now) {
			t.Errorf("%q: %v is after now", s, got)
		}
	})
}

// TestTriageRedactsPassword checks that a password in a URL given to
// triage or capture never reaches the terminal.
func TestTriageRedactsPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"triage", "--prometheus", "ftp://ops:hunter2@prom:9090"},
		{"triage", "http://ops:hunter2@prom:9090"},
		{"triage", "--prometheus", "http://ops:hunter2@" + dead, "--range", "1h"},
		{"triage", "--prometheus", "http://ops:hunter2@[::1", "--range", "1h"},
		{"capture", "--seconds", "1", "-o", filepath.Join(t.TempDir(), "c"), "http://ops:hunter2@" + dead},
		{"capture", "http://ops:hunter2@" + dead + "/?q=1"},
	} {
		code, stderr := runExit(t, args...)
		if code == 0 || strings.Contains(stderr, "hunter2") || !strings.Contains(stderr, "ops:xxxxx@") {
			t.Errorf("%s: exit %d, stderr %q; want an error naming the URL without its password", args[0], code, strings.ReplaceAll(stderr, "hunter2", "PW"))
		}
	}
}

// TestTriageWarningsEscaped checks that Prometheus's warnings, printed on
// standard error beside --json, reach the terminal escaped.
func TestTriageWarningsEscaped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/values") {
			w.Write([]byte(`{"status":"success","data":[]}`))
			return
		}
		w.Write([]byte(`{"status":"success","warnings":["store \u001b[2J down\r\nlatscope triage: forged"],"data":{"resultType":"matrix","result":[
			{"metric":{"job":"j","instance":"a"},"values":[[60,"0.01"],[120,"0.09"]]},
			{"metric":{"job":"j","instance":"b"},"values":[[60,"0.01"],[120,"0.01"]]}]}}`))
	}))
	defer srv.Close()
	_, stderr, err := runCLI(t, "triage", "--prometheus", srv.URL, "--since", "1970-01-01T00:00:00Z", "--until", "1970-01-01T00:02:00Z", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(stderr, "\x1b\r") || strings.Contains(stderr, "\nlatscope triage: forged") || !strings.Contains(stderr, `store \x1b[2J down\r\n`) {
		t.Errorf("stderr %q", stderr)
	}
}

// TestTriageCredentialFiles checks that a token or password file that is
// not a small regular file is refused with one line naming the flag and
// the file, before anything is read from a device.
func TestTriageCredentialFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 64<<10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bearer-token-file", "/dev/zero"}, "flag --bearer-token-file: /dev/zero is not a regular file"},
		{[]string{"--user", "ops", "--password-file", "/dev/zero"}, "flag --password-file: /dev/zero is not a regular file"},
		{[]string{"--bearer-token-file", dir}, "flag --bearer-token-file: " + dir + " is not a regular file"},
		{[]string{"--bearer-token-file", big}, "flag --bearer-token-file: " + big + " is larger than 64 KiB"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := parseTriage(io.Discard, append([]string{"--prometheus", "http://127.0.0.1:9090"}, tc.args...), time.Now())
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: still reading after 5 s", tc.args)
		}
	}
}

// TestTriageTimeLimits checks that ranges and steps that overflow, start
// before 1970 or hold too many steps are refused with one line naming the
// flag.
func TestTriageTimeLimits(t *testing.T) {
	now := time.Date(2026, 12, 4, 6, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "0001-01-01T00:00:00Z", "--step", "8760h"}, "flag --step 8760h0m0s: at most 24h0m0s"},
		{[]string{"--since", "0001-01-01T00:00:00Z", "--step", "1h"}, "flag --since 0001-01-01T00:00:00Z: starts before 1970"},
		{[]string{"--since", "-200y"}, "flag --since -200y: starts before 1970"},
		{[]string{"--range", "100y"}, "flag --range 100y: starts before 1970"},
		{[]string{"--since", "-1h", "--until", "2500-01-01T00:00:00Z"}, "flag --until 2500-01-01T00:00:00Z: after 2200"},
		{[]string{"--range", "30d"}, "flags --range and --step: 43200 steps of 1m, at most 11000"},
		{[]string{"--since", "2026-01-01T00:00:00Z", "--step", "10s"}, "flags --since, --until and --step: 2914020 steps of 10s, at most 11000"},
	} {
		_, err := parseTriage(io.Discard, append([]string{"--prometheus", "http://127.0.0.1:9090"}, tc.args...), now)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
