package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dbwaitCapture unpacks a real capture of `latscope lab dbwait` (package
// dbwait's testdata) into a temporary directory and returns the trace and
// server-log paths.
func dbwaitCapture(t *testing.T, cond string) (trace, pglog string) {
	t.Helper()
	dir := t.TempDir()
	unpack := func(name string) string {
		f, err := os.Open(filepath.Join("..", "..", "dbwait", "testdata", "lab", name+".gz"))
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
		{"no trace", []string{"--pglog", pg}, "dbwait: flag --trace is required"},
		{"no log", []string{"--trace", tr}, "dbwait: give the database's statement log: --pglog FILE"},
		{"argument", []string{"--trace", tr, "--pglog", pg, "extra"}, `unexpected argument "extra"`},
		{"threshold", []string{"--trace", tr, "--pglog", pg, "--threshold", "0s"}, "flag --threshold 0s: want a positive duration"},
		{"missing trace", []string{"--trace", tr + ".nope", "--pglog", pg}, "--trace: open "},
		{"not a trace", []string{"--trace", pg, "--pglog", pg}, "not a Go execution trace"},
		{"not a jsonlog", []string{"--trace", tr, "--pglog", tr}, "--pglog: " + tr + ": pglog: line 1 (byte offset 0)"},
		{"no spans", []string{"--trace", filepath.Join("testdata", "serial.trace"), "--pglog", pg}, `no DB spans in the trace: 30 "db" regions without a traceparent logged inside`},
		{"no match", []string{"--trace", tr, "--pglog", otherLog}, "no statement matched: none of the"},
		{"clock", []string{"--trace", tr, "--pglog", skewed}, "clock mismatch: "},
		{"bad samples", []string{"--trace", tr, "--pglog", pg, "--samples", pg}, "--samples: " + pg + ": line 1"},
		{"bad dbhost", []string{"--trace", tr, "--pglog", pg, "--dbhost", pg}, "--dbhost: " + pg + ":1: "},
		{"dbhost with mysql", []string{"--trace", tr, "--mysql-slowlog", pg, "--dbhost", pg}, "flag --dbhost: a recording of PostgreSQL's backends"},
		{"missing dbhost", []string{"--trace", tr, "--pglog", pg, "--dbhost", pg + ".nope"}, "--dbhost: open "},
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
