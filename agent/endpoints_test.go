package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/tracelog"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"", "", true},
		{"127.0.0.1:0", "", true},
		{"[::1]:6061", "", true},
		{"localhost:6061", "", true},
		{":6061", "", false},
		{"0.0.0.0:6061", "", false},
		{"10.1.2.3:6061", "", false},
		{"0.0.0.0:6061", "t0ken", true},
		{"no-port", "", false},
	}
	for _, tt := range tests {
		if err := checkListen(tt.addr, tt.token); (err == nil) != tt.ok {
			t.Errorf("checkListen(%q, %q) = %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 5 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"300", 300 * time.Second, true},
		{"301", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSeconds(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestEndpoints serves the endpoints on loopback with a token and uses
// each of them.
func TestEndpoints(t *testing.T) {
	const token = "s3cret"
	a, err := New(Options{Dir: t.TempDir(), Listen: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	base := "http://" + a.Addr() + EndpointsPrefix
	auth := []string{"Authorization", "Bearer " + token}

	if code, _ := get(t, nil, base+"snapshots"); code != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", code)
	}
	if code, _ := get(t, nil, base+"snapshots", "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("with a wrong token: status %d, want 401", code)
	}
	if code, body := get(t, nil, base+"snapshots", auth...); code != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("empty list: %d %q", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"snapshot", nil)
	req.Header.Set(auth[0], auth[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var took struct{ Name string }
	json.NewDecoder(resp.Body).Decode(&took)
	resp.Body.Close()
	if resp.StatusCode != 200 || !isSnapshotName(took.Name) {
		t.Fatalf("POST snapshot: %d %+v", resp.StatusCode, took)
	}
	code, body := get(t, nil, base+"snapshots", auth...)
	var list []SnapshotFile
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list) != 1 || list[0].Name != took.Name || list[0].Bytes == 0 {
		t.Fatalf("list after a snapshot: %d %s (%v)", code, body, err)
	}
	code, body = get(t, nil, base+"snapshots/"+took.Name, auth...)
	if code != 200 || int64(len(body)) != list[0].Bytes {
		t.Fatalf("download: status %d, %d bytes, want %d", code, len(body), list[0].Bytes)
	}
	traceEvents(t, took.Name, bytes.NewReader(body))
	if code, _ := get(t, nil, base+"snapshots/latscope-none.trace", auth...); code != 404 {
		t.Errorf("missing snapshot: status %d, want 404", code)
	}
	if code, _ := get(t, nil, base+"snapshots/..%2f..%2fetc%2fpasswd", auth...); code != 404 {
		t.Errorf("path escape: status %d, want 404", code)
	}

	code, body = get(t, nil, base+"flight", auth...)
	if code != 200 || len(logs(traceEvents(t, "flight", bytes.NewReader(body)), tracelog.CPU)) == 0 {
		t.Errorf("flight: status %d, %d bytes, want a trace with the CPU counter", code, len(body))
	}
	code, body = get(t, nil, base+"trace?seconds=0.3", auth...)
	if code != 200 {
		t.Fatalf("on-demand trace: status %d: %s", code, body)
	}
	if cpu := logs(traceEvents(t, "on-demand", bytes.NewReader(body)), tracelog.CPU); len(cpu) < 2 {
		t.Errorf("on-demand trace has %d CPU counter logs, want them at its start and end", len(cpu))
	}
	if code, _ := get(t, nil, base+"trace?seconds=x", auth...); code != 400 {
		t.Errorf("bad seconds: status %d, want 400", code)
	}
}

// TestEndpointsNoRecorder: without a recorder, on-demand traces still
// carry the CPU counter and host samples.
func TestEndpointsNoRecorder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, plantedName), []byte("not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{NoRecorder: true, Dir: dir, Listen: "127.0.0.1:0", SampleInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	base := "http://" + a.Addr() + EndpointsPrefix
	// Without the recorder the agent opens no directory and serves no file.
	if code, body := get(t, nil, base+"snapshots"); code != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("list without a recorder: %d %s, want []", code, body)
	}
	if code, _ := get(t, nil, base+"snapshots/"+plantedName); code != 404 {
		t.Errorf("download without a recorder: status %d, want 404", code)
	}
	if code, _ := get(t, nil, base+"flight"); code != 404 {
		t.Errorf("flight without a recorder: status %d, want 404", code)
	}
	code, body := get(t, nil, base+"trace?seconds=0.3")
	if code != 200 {
		t.Fatalf("on-demand trace: status %d: %s", code, body)
	}
	if cpu := logs(traceEvents(t, "on-demand", bytes.NewReader(body)), tracelog.CPU); len(cpu) < 4 {
		t.Errorf("on-demand trace has %d CPU counter logs, want start, end and every 50 ms", len(cpu))
	}
}

// TestBearerScheme: the scheme of "Authorization: Bearer TOKEN" is
// case-insensitive (RFC 7235 §2.1); the token is not.
func TestBearerScheme(t *testing.T) {
	const token = "s3cret"
	h := bearer(token, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for _, tt := range []struct {
		header string
		ok     bool
	}{
		{"Bearer s3cret", true},
		{"bearer s3cret", true},
		{"BEARER s3cret", true},
		{"bEaReR s3cret", true},
		{"Bearer  s3cret", true}, // 1*SP
		{"", false},
		{"Bearer", false},
		{"Bearer ", false},
		{"Bearers3cret", false},
		{"Bearer S3CRET", false},
		{"Bearer s3cret ", false},
		{"Bearer s3cre", false},
		{"Basic s3cret", false},
		{"Bearer\ts3cret", false},
		{" Bearer s3cret", false},
	} {
		req := httptest.NewRequest(http.MethodGet, EndpointsPrefix, nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got := w.Code == http.StatusOK; got != tt.ok {
			t.Errorf("Authorization %q: status %d, want ok=%v", tt.header, w.Code, tt.ok)
		}
	}
}
