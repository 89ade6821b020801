package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/report/loadreport"
	"github.com/latscope/latscope/internal/tier"
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
	err = cli.Run(ctx, &out, &errb, append([]string{"load"}, args...))
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
	tier.Timing(t)
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
	// 100/s for 200 ms: requests 0..19 are due. Each is sent and answered,
	// or, when the host is too busy to send it before the run's end,
	// reported as dropped (internal/loadgen's doc): never lost.
	codes, _ := rep["codes"].(map[string]any)
	requests, _ := rep["requests"].(float64)
	dropped, _ := rep["dropped"].(float64)
	if requests+dropped != 20 || codes["200"] != requests || requests < 1 {
		t.Errorf("requests %v, dropped %v, codes %v; want 20 due: each answered with code 200 or dropped", rep["requests"], rep["dropped"], rep["codes"])
	}
}

// TestLoadOutput writes results, JSON lines or CSV, and reads them back.
func TestLoadOutput(t *testing.T) {
	tier.Timing(t)
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

// TestLoadOutputNotRegular: -o never replaces what is not a regular file
// (internal/atomicfile refuses it): the run is refused before any load,
// naming -o, and the symlink, FIFO, directory or device is left as it was.
func TestLoadOutputNotRegular(t *testing.T) {
	_, url := newLoadServer(t)
	tests := []struct {
		name string
		make func(t *testing.T, path string) // creates the node at path
	}{
		{"symlink", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "target")
			loadMust(t, os.WriteFile(target, []byte("keep"), 0o644))
			loadMust(t, os.Symlink(target, path))
		}},
		{"dangling symlink", func(t *testing.T, path string) { loadMust(t, os.Symlink("nowhere", path)) }},
		{"FIFO", func(t *testing.T, path string) { loadMust(t, syscall.Mkfifo(path, 0o644)) }},
		{"directory", func(t *testing.T, path string) { loadMust(t, os.Mkdir(path, 0o755)) }},
		{"device", func(t *testing.T, path string) {
			// a character device like /dev/null (1, 3), made in the test's own directory
			if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("cannot make a device node (needs root): %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "results.jsonl")
			tt.make(t, path)
			before := describeDir(t, dir)
			type result struct {
				stdout string
				err    error
			}
			done := make(chan result, 1)
			go func() {
				stdout, _, err := runLoadArgs(t, context.Background(), append(slices.Clone(short), "-o", path, url)...)
				done <- result{stdout, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("load -o did not return within 10 s (blocked opening the node?)")
			}
			if r.err == nil || !strings.Contains(r.err.Error(), "flag -o") || !strings.Contains(r.err.Error(), path) || strings.Contains(r.err.Error(), "\n") {
				t.Errorf("err = %v, want one line naming -o and %s", r.err, path)
			}
			if r.stdout != "" {
				t.Errorf("printed a report; want the refusal before any load:\n%s", r.stdout)
			}
			if after := describeDir(t, dir); after != before {
				t.Errorf("directory changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// describeDir lists dir's entries with their types, link targets and the
// contents of regular files.
func describeDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	loadMust(t, err)
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		loadMust(t, err)
		fmt.Fprintf(&b, "%s %v", e.Name(), fi.Mode().Type())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", l)
		case fi.Mode().IsRegular():
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("; ")
	}
	return b.String()
}

func loadMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLoadBadFlags: a bad flag or URL is refused before any load, in one
// line naming the flag, by loadgen.Options.Validate.
func TestLoadBadFlags(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-c", "0", url}, "flag -c/--clients 0: want 1 to 100000"},
		{[]string{"--clients", "-3", url}, "flag -c/--clients -3"},
		{[]string{"-c", "100001", url}, "flag -c/--clients 100001"},
		{[]string{"--rate", "10", "-c", "0", url}, "flag -c/--clients 0"},
		{[]string{"-c", "many", url}, "flag -c"},
		{[]string{"-d", "0s", url}, "flag -d/--duration 0s: want more than 0"},
		{[]string{"--duration", "-1s", url}, "flag -d/--duration -1s"},
		{[]string{"-d", "10", url}, "flag -d"},
		{[]string{"-d", "2562047h", "--warmup", "1h", url}, "flag -d/--duration 2562047h0m0s: Warmup + Duration exceeds"},
		{[]string{"--warmup", "-1s", url}, "flag --warmup -1s"},
		{[]string{"--rate", "-5", url}, "flag --rate -5"},
		{[]string{"--rate", "NaN", url}, "flag --rate NaN"},
		{[]string{"--rate", "+Inf", url}, "flag --rate +Inf"},
		{[]string{"--rate", "-Inf", url}, "flag --rate -Inf"},
		{[]string{"--rate", "1e10", url}, "flag --rate 1e+10"},
		{[]string{"--rate", "10", "--max-in-flight", "0", url}, "flag --max-in-flight 0"},
		{[]string{"--max-in-flight", "0", url}, "flag --max-in-flight 0: want 1 to 1000000"},
		{[]string{"--max-in-flight", "-1", url}, "flag --max-in-flight -1"},
		{[]string{"--max-in-flight", "1000001", url}, "flag --max-in-flight 1000001"},
		{[]string{"--timeout", "-1s", url}, "flag --timeout -1s"},
		{[]string{"--think", "-1ms", url}, "flag --think -1ms"},
		{[]string{"--method", "NOT A METHOD", url}, `flag --method "NOT A METHOD"`},
		{[]string{"--method", "", url}, "flag -method: want a method such as GET or POST"},
		{[]string{"-H", "no colon", url}, "flag -H"},
		{[]string{"-H", ": empty name", url}, "flag -H"},
		{[]string{"-H", "bad name: x", url}, `flag -H "bad name": the name is not a token`},
		{[]string{"-H", "X-A: a\r\nX-B: b", url}, `flag -H "X-A: a\r\nX-B: b": the value holds the control character U+000D`},
		{[]string{"-H", "X-A: a\nb", url}, "flag -H"},
		{[]string{"-H", "Host: a\rb", url}, "flag -H"},
		{[]string{"-o", "dir" + string(filepath.Separator), url}, "flag -o"},
		{[]string{"--nope", url}, "-nope"},
		{[]string{}, "want one URL argument, got 0"},
		{[]string{url, url}, "want one URL argument, got 2"},
		{[]string{"ftp://127.0.0.1/"}, "URL \"ftp://127.0.0.1/\": scheme must be http:// or https://"},
		{[]string{"127.0.0.1:8080"}, "URL"},
		{[]string{"http://127.0.0.1:99999/"}, "URL \"http://127.0.0.1:99999/\": port 99999: want 1 to 65535"},
		{[]string{"http://127.0.0.1:0/"}, "port 0: want 1 to 65535"},
		{[]string{"http://127.0.0.1:x/"}, "invalid port"},
		{[]string{"http://:8080/"}, "no host"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			start := time.Now()
			stdout, _, err := runLoadArgs(t, context.Background(), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tt.want)
			}
			if stdout != "" || time.Since(start) > time.Second {
				t.Errorf("refused after %v, having printed %q; want at once, before any load", time.Since(start), stdout)
			}
		})
	}
}

// TestLoadAllFailed: a run in which no request succeeded prints its report,
// with failures apart from throughput, and fails; one with some failures
// does not.
func TestLoadAllFailed(t *testing.T) {
	tier.Timing(t)
	refused := "http://" + refusedAddr(t) + "/"
	_, ok := newLoadServer(t)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	var n atomic.Int64
	half := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer half.Close()
	tests := []struct {
		name    string
		args    []string
		wantErr string   // "" = success
		stdout  []string // in the report
	}{
		{"refused", []string{refused}, "load: all ", []string{"rps       0.00 successful, ", " failed\n", "errors    ", " (100.0%)", "connection refused"}},
		{"refused, open", []string{"--rate", "200", refused}, "most often: dial tcp " + strings.TrimPrefix(strings.TrimSuffix(refused, "/"), "http://") + ": connect: connection refused", []string{"rps       0.00 successful, "}},
		{"503", []string{busy.URL}, "measured requests failed, most often: 503 Service Unavailable", []string{"codes     503: "}},
		{"refused, JSON", []string{"--json", refused}, "load: all ", []string{`"rps": 0,`, `"error_rps": `}},
		// the results file of a run that failed is still written: the errors are in it
		{"refused, -o", []string{"-o", "OUT", refused}, "load: all ", []string{"rps       0.00 successful, "}},
		{"half failed", []string{half.URL}, "", []string{" successful, ", " failed\n"}},
		// request 0 is due at 0 and answered in the warm-up; request 1 is due after the end.
		{"nothing measured", []string{"--rate", "1", "--warmup", "100ms", "-d", "1ms", ok}, "load: no request was measured (1 warm-up, 0 dropped)", []string{"requests  0  (excluded: 1 warm-up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := slices.Clone(tt.args)
			out := filepath.Join(t.TempDir(), "results.jsonl")
			if i := slices.Index(args, "OUT"); i >= 0 {
				args[i] = out
			}
			stdout, _, err := runLoadArgs(t, context.Background(), append(slices.Clone(short), args...)...)
			if slices.Contains(tt.args, "OUT") {
				b, rerr := os.ReadFile(out)
				if rerr != nil || !bytes.Contains(b, []byte("connection refused")) {
					t.Errorf("results file: %v, %d bytes; want the failed results", rerr, len(b))
				}
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n")) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("report lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// refusedAddr is a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
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
	if err := loadreport.WriteJSON(&buf, rep); err != nil {
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
