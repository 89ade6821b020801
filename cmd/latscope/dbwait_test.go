package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/triage/promtest"
)

// dbwaitCapture unpacks a real capture of `latscope-lab dbwait` (package
// dbwait's testdata) into a temporary directory and returns the trace and
// server-log paths.
func dbwaitCapture(t *testing.T, cond string) (trace, pglog string) {
	t.Helper()
	dir := t.TempDir()
	unpack := func(name string) string {
		f, err := os.Open(filepath.Join("..", "..", "internal", "dbwait", "testdata", "lab", name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return unpack(cond + ".trace"), unpack(cond + ".postgresql.json")
}

func TestDBWaitText(t *testing.T) {
	tr, pg := dbwaitCapture(t, "pause")
	stdout, stderr, err := runCLI(t, "dbwait", "--trace", tr, "--pglog", pg)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	golden(t, "dbwait-pause.stdout", stdout)
	if !strings.Contains(stdout, " paused ") {
		t.Errorf("no paused statement in\n%s", stdout)
	}
}

func TestDBWaitJSON(t *testing.T) {
	tr, pg := dbwaitCapture(t, "quota")
	stdout, stderr, err := runCLI(t, "dbwait", "--json", "--trace", tr, "--pglog", pg)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var res struct {
		Summary struct {
			Matched int `json:"matched"`
		} `json:"summary"`
		Verdicts []struct {
			Verdict string `json:"verdict"`
			Count   int    `json:"queries"`
		} `json:"verdicts"`
		Host struct {
			Delta struct {
				NrThrottled *uint64 `json:"nr_throttled"`
			} `json:"delta"`
		} `json:"host"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	thr := 0
	for _, v := range res.Verdicts {
		if v.Verdict == "throttled" {
			thr = v.Count
		}
	}
	if res.Summary.Matched == 0 || thr == 0 || res.Host.Delta.NrThrottled == nil || *res.Host.Delta.NrThrottled == 0 {
		t.Errorf("matched %d, throttled %d, nr_throttled %v: want all > 0", res.Summary.Matched, thr, res.Host.Delta.NrThrottled)
	}
}

// TestDBWaitErrors: every refusal is one line naming the flag, file or
// problem, with a hint where there is one.
func TestDBWaitErrors(t *testing.T) {
	tr, pg := dbwaitCapture(t, "baseline")
	_, otherLog := dbwaitCapture(t, "proxy")
	skewed := filepath.Join(t.TempDir(), "skewed.json")
	if err := os.WriteFile(skewed, shiftLog(t, pg, 2*time.Second), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no trace", []string{"--pglog", pg}, "dbwait: want the Go execution trace"},
		{"two traces", []string{"--pglog", pg, tr, tr}, "want one trace"},
		{"positional and --trace", []string{"--pglog", pg, "--trace", tr, tr}, "want one trace"},
		{"no log", []string{"--trace", tr}, "dbwait: give the database's statement log: --pglog FILE"},
		{"argument", []string{"--trace", tr, "--pglog", pg, "extra"}, `unexpected argument "extra"`},
		{"threshold", []string{"--trace", tr, "--pglog", pg, "--threshold", "0s"}, "flag --threshold 0s: want a positive duration"},
		{"missing trace", []string{"--pglog", pg, tr + ".nope"}, "open " + tr + ".nope"},
		{"not a trace", []string{"--trace", pg, "--pglog", pg}, "not a Go execution trace"},
		{"not a jsonlog", []string{"--trace", tr, "--pglog", tr}, "--pglog: " + tr + ": pglog: line 1 (byte offset 0)"},
		{"no spans", []string{"--trace", filepath.Join("testdata", "serial.trace"), "--pglog", pg}, `no DB spans in the trace: 30 "db" regions without a traceparent logged inside`},
		{"no match", []string{"--trace", tr, "--pglog", otherLog}, "no statement matched: none of the"},
		{"clock", []string{"--trace", tr, "--pglog", skewed}, "clock mismatch: "},
		{"bad samples", []string{"--trace", tr, "--pglog", pg, "--samples", pg}, "--samples: " + pg + ": line 1"},
		{"bad dbhost", []string{"--trace", tr, "--pglog", pg, "--dbhost", pg}, "--dbhost: " + pg + ":1: "},
		{"dbhost with mysql", []string{"--trace", tr, "--mysql-slowlog", pg, "--dbhost", pg}, "flag --dbhost: a recording of PostgreSQL's backends"},
		{"missing dbhost", []string{"--trace", tr, "--pglog", pg, "--dbhost", pg + ".nope"}, "--dbhost: open "},
		{"instance without prometheus", []string{"--trace", tr, "--pglog", pg, "--dbhost-instance", "db1:9100"}, "flags --dbhost-instance and --prometheus-*: they go with --dbhost-prometheus URL"},
		{"token and user", []string{"--trace", tr, "--pglog", pg, "--dbhost-prometheus", "http://127.0.0.1:1", "--prometheus-bearer-token-file", pg, "--prometheus-user", "u"}, "a bearer token or basic auth"},
		{"password without user", []string{"--trace", tr, "--pglog", pg, "--dbhost-prometheus", "http://127.0.0.1:1", "--prometheus-password-file", pg}, "give --prometheus-user too"},
		{"prometheus down", []string{"--trace", tr, "--pglog", pg, "--dbhost-prometheus", "http://someone:s3cret@127.0.0.1:1"}, "--dbhost-prometheus: Prometheus at http://someone:xxxxx@127.0.0.1:1: node_pressure_cpu_waiting_seconds_total["},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"dbwait"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			oneLine(t, err.Error())
			if !strings.HasPrefix(err.Error(), "dbwait: ") {
				t.Errorf("error %q does not start with the command", err)
			}
		})
	}
	// The offset the clock error names fixes the join.
	if _, stderr, err := runCLI(t, "dbwait", "--trace", tr, "--pglog", skewed, "--pg-clock-offset", "2s"); err != nil {
		t.Errorf("with --pg-clock-offset 2s: %v\n%s", err, stderr)
	}
}

// shiftLog returns a jsonlog with every timestamp moved by d, as if the
// database host's clock were d ahead.
func shiftLog(t *testing.T, path string, d time.Duration) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.000 MST", m["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		m["timestamp"] = ts.Add(d).Format("2006-01-02 15:04:05.000 MST")
		line, _ := json.Marshal(m)
		out.Write(append(line, '\n'))
	}
	return out.Bytes()
}

// TestDBWaitInterrupted (issue 29, item 8): dbwait reading a log that
// never ends (a FIFO, fed endlessly or not at all) stops on SIGINT or
// SIGTERM, exits 2 with one line that says it was interrupted, and
// prints no report.
func TestDBWaitInterrupted(t *testing.T) {
	tr, _ := dbwaitCapture(t, "pause")
	endless := func(prefix, chunk string) func(i int) string {
		return func(i int) string {
			if i == 0 {
				return prefix
			}
			return chunk
		}
	}
	a64k := strings.Repeat("a", 64<<10)
	for _, tc := range []struct {
		name, flag string
		sig        syscall.Signal
		data       func(i int) string // the i-th write; "" ends the writes (the FIFO stays open)
	}{
		{"pglog without newline", "--pglog", syscall.SIGINT, endless(`{"timestamp":"2026-12-02 17:13:26.215 UTC","message":"`, a64k)},
		{"pglog stalled", "--pglog", syscall.SIGTERM, endless(`{"timestamp":"2026-12-02 17:13:26.215 UTC"`, "")},
		{"mysql-csv quoted field", "--mysql-csv", syscall.SIGINT, endless("SQL_TEXT,TIMER_WAIT\n\"", a64k)},
		{"mysql-slowlog statement", "--mysql-slowlog", syscall.SIGTERM, endless("# Query_time: 0.1\nSELECT\n", strings.Repeat("  OR 1 = 1\n", 6000))},
		{"samples", "--samples", syscall.SIGTERM, endless("# samples\n", strings.Repeat("# more to come\n", 4000))},
		{"dbhost recording", "--dbhost", syscall.SIGINT, func(i int) string {
			if i == 0 {
				return dbhost.Header + " period_ns=10000000\n"
			}
			var b strings.Builder
			for j := range 4000 {
				fmt.Fprintf(&b, "%d %d %d\n", int64(1_800_000_000e9)+int64(i*4000+j)*1e6, 100+j%50, i)
			}
			return b.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "log")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"dbwait", "--trace", tr, tc.flag, fifo}
			if tc.flag == "--dbhost" || tc.flag == "--samples" {
				_, pg := dbwaitCapture(t, "pause")
				args = append(args, "--pglog", pg)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// The open returns once dbwait has opened the FIFO to read it.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			written, i := 0, 0
			for ; written < 4<<20; i++ {
				s := tc.data(i)
				if s == "" {
					time.Sleep(300 * time.Millisecond) // dbwait waits in its read
					break
				}
				n, err := io.WriteString(w, s)
				written += n
				if err != nil {
					t.Fatalf("dbwait stopped reading after %d bytes: %v\n%s", written, err, stderr.String())
				}
			}
			cmd.Process.Signal(tc.sig)
			go io.Copy(w, &endlessReader{data: tc.data, i: i}) // it goes on until dbwait closes the FIFO
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("dbwait still running 20 s after %v (%d bytes written)", tc.sig, written)
			}
			t.Logf("%s", stderr.String())
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit: %v, want status 2", err)
			}
			if msg := oneLine(t, stderr.String()); !strings.HasPrefix(msg, "latscope: dbwait: interrupted reading "+tc.flag+": ") || !strings.Contains(msg, fifo) {
				t.Errorf("stderr %q, want one line saying dbwait was interrupted reading %s %s", msg, tc.flag, fifo)
			}
			if stdout.Len() > 0 {
				t.Errorf("a report after the interruption:\n%s", stdout.String())
			}
		})
	}
}

// endlessReader goes on with data's writes from the i-th, forever; for a
// stalled feed (data(i) == ""), it blocks.
type endlessReader struct {
	data func(int) string
	i    int
	buf  string
}

func (e *endlessReader) Read(p []byte) (int, error) {
	if e.buf == "" {
		if e.buf = e.data(e.i); e.buf == "" {
			select {}
		}
		e.i++
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestDBWaitPrometheusWindow: --dbhost-prometheus asks a real Prometheus
// (scraping a real node_exporter) for the database host's pressure over
// the trace's own time on the wall clock, a minute wider each side; for
// a capture recorded days before the server started (the kept
// baseline, 2 December), it holds none, and
// the error says so, naming the window and the series, on one line.
func TestDBWaitPrometheusWindow(t *testing.T) {
	tier.Busy(t)
	tr, pg := dbwaitCapture(t, "baseline")
	url := promtest.StartScraping(t, promtest.NodeExporter(t))
	_, _, err := runCLI(t, "dbwait", "--pglog", pg, "--dbhost-prometheus", url, tr)
	// the capture's trace ran from 17:13:18 to 17:13:21 on 2 December
	want := "dbwait: --dbhost-prometheus: Prometheus at " + url + " holds no series of node_pressure_cpu_waiting_seconds_total from 2026-12-02T17:12:18Z to 2026-12-02T17:14:21Z: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want it to start %q", err, want)
	}
	oneLine(t, err.Error())
}
