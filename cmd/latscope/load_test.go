package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/loadgen"
)

// loadServer answers "ok" after 2 ms and remembers the X-Run headers and
// methods it saw.
type loadServer struct {
	mu      sync.Mutex
	methods map[string]bool
	xrun    map[string]bool
}

func (s *loadServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.methods[r.Method] = true
	s.xrun[strings.Join(r.Header.Values("X-Run"), ",")] = true
	s.mu.Unlock()
	select {
	case <-time.After(2 * time.Millisecond):
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, "ok")
}

func newLoadServer(t *testing.T) (*loadServer, string) {
	t.Helper()
	s := &loadServer{methods: map[string]bool{}, xrun: map[string]bool{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// short keeps command runs to a quarter second.
var short = []string{"-c", "3", "-d", "200ms", "--warmup", "50ms"}

func runLoadArgs(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(ctx, &out, &errb, append([]string{"load"}, args...))
	return out.String(), errb.String(), err
}

func TestLoadText(t *testing.T) {
	s, url := newLoadServer(t)
	args := append(slices.Clone(short), "--method", "PUT", "-H", "X-Run: 1", "-H", "X-Run: 2", url)
	stdout, _, err := runLoadArgs(t, context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests  ", "window    ", "rps       ", "p99", "codes     200: ", "errors    0\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if !s.methods["PUT"] || len(s.methods) != 1 || !s.xrun["1,2"] || len(s.xrun) != 1 {
		t.Errorf("server saw methods %v, X-Run %v; want only PUT and \"1,2\"", s.methods, s.xrun)
	}
}

// TestLoadJSON also puts flags after the URL and uses the open model.
func TestLoadJSON(t *testing.T) {
	_, url := newLoadServer(t)
	stdout, _, err := runLoadArgs(t, context.Background(), url, "--json", "--rate", "100", "-d", "200ms", "--warmup", "0s")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	for _, k := range []string{"requests", "errors", "warmup", "late", "dropped", "rps", "min_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "window_s", "start", "end", "bytes_in", "codes", "top_errors", "distinct_errors"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("JSON report lacks %q", k)
		}
	}
	// 100/s for 200 ms: requests 0..19 are due.
	codes, _ := rep["codes"].(map[string]any)
	if rep["requests"] != 20.0 || codes["200"] != 20.0 {
		t.Errorf("requests %v, codes %v; want 20 requests with code 200", rep["requests"], rep["codes"])
	}
}

// TestLoadOutput writes results, JSON lines or CSV, and reads them back.
func TestLoadOutput(t *testing.T) {
	_, url := newLoadServer(t)
	for _, name := range []string{"results.jsonl", "results.csv"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		stdout, stderr, err := runLoadArgs(t, context.Background(), append(slices.Clone(short), "-o", path, "--json", url)...)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct{ Requests, Warmup int }
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		dec := loadgen.NewDecoder(f)
		var r loadgen.Result
		for err = dec(&r); err == nil; err = dec(&r) {
			n++
		}
		f.Close()
		if err != io.EOF {
			t.Errorf("%s: %v", name, err)
		}
		if n == 0 || n != rep.Requests+rep.Warmup || !strings.Contains(stderr, "wrote ") {
			t.Errorf("%s holds %d results, report counts %d + %d warm-up; stderr %q", name, n, rep.Requests, rep.Warmup, stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s: directory holds %v, want only the results file", name, entries)
		}
	}
}

// TestLoadOutputFailure: an interrupted run leaves no results file, not
// even a temporary one, and an unwritable path fails before any load.
func TestLoadOutputFailure(t *testing.T) {
	_, url := newLoadServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "results.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	stdout, _, err := runLoadArgs(t, ctx, "-d", "1m", "--warmup", "0s", "-o", path, url)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no results file written") {
		t.Errorf("interrupted run: err = %v, want the deadline and no results file", err)
	}
	if !strings.Contains(stdout, "requests  ") {
		t.Errorf("interrupted run printed no partial report:\n%s", stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directory holds %v after a failed run, want nothing", entries)
	}
	_, _, err = runLoadArgs(t, context.Background(), "-o", filepath.Join(dir, "no", "such", "dir.jsonl"), url)
	if err == nil || !strings.Contains(err.Error(), "flag -o") {
		t.Errorf("unwritable -o: err = %v, want an error naming -o", err)
	}
}

func TestLoadBadFlags(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-c", "0", url}, "-c/--clients"},
		{[]string{"--clients", "-3", url}, "-c/--clients"},
		{[]string{"-c", "many", url}, "flag -c"},
		{[]string{"-d", "0s", url}, "-d/--duration"},
		{[]string{"--duration", "-1s", url}, "-d/--duration"},
		{[]string{"-d", "10", url}, "flag -d"},
		{[]string{"--warmup", "-1s", url}, "--warmup"},
		{[]string{"--rate", "-5", url}, "--rate"},
		{[]string{"--rate", "NaN", url}, "--rate"},
		{[]string{"--rate", "+Inf", url}, "--rate"},
		{[]string{"--rate", "10", "--max-in-flight", "0", url}, "--max-in-flight"},
		{[]string{"--timeout", "-1s", url}, "--timeout"},
		{[]string{"--think", "-1ms", url}, "--think"},
		{[]string{"--method", "NOT A METHOD", url}, "--method"},
		{[]string{"-H", "no colon", url}, "flag -H"},
		{[]string{"-H", ": empty name", url}, "flag -H"},
		{[]string{"-H", "bad name: x", url}, "flag -H"},
		{[]string{"--nope", url}, "-nope"},
		{[]string{}, "want one URL argument, got 0"},
		{[]string{url, url}, "want one URL argument, got 2"},
		{[]string{"ftp://127.0.0.1/"}, "URL"},
		{[]string{"127.0.0.1:8080"}, "URL"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := runLoadArgs(t, context.Background(), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line naming %q", err, tt.want)
			}
		})
	}
}

// TestLoadHelp: -h prints the synopsis, the flags and the examples.
func TestLoadHelp(t *testing.T) {
	stdout, stderr, err := runLoadArgs(t, context.Background(), "-h")
	help := stdout + stderr
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err %v, want none", err)
	}
	for _, want := range []string{"usage: latscope load [flags] URL", "-clients", "-max-in-flight", "\nexamples:\n  latscope load "} {
		if !strings.Contains(help, want) {
			t.Errorf("-h output lacks %q:\n%s", want, help)
		}
	}
}

// TestLoadDocs: docs/load.md mentions every flag and every JSON report
// field.
func TestLoadDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/load.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := newLoadFlagSet(&loadConfig{opts: loadgen.DefaultOptions}, headerFlag{}, io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		if !bytes.Contains(doc, []byte("-"+f.Name)) {
			t.Errorf("docs/load.md does not mention flag -%s", f.Name)
		}
	})
	rep := &loadgen.Report{}
	rep.Add(&loadgen.Result{Intended: time.Unix(1, 0), Latency: time.Millisecond, Code: 200})
	rep.Close()
	var buf bytes.Buffer
	if err := loadgen.NewJSONReporter(rep).Report(&buf); err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(buf.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	for k := range fields {
		if !bytes.Contains(doc, []byte("`"+k+"`")) {
			t.Errorf("docs/load.md does not describe JSON field `%s`", k)
		}
	}
}
