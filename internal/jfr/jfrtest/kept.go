package jfrtest

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KeptDir returns internal/jfr/testdata/rec, where the recordings the fast tier
// reads are kept (internal/jfr/testdata/README.md; `go run
// ./internal/jfr/internal/mkrecordings` records them again).
func KeptDir() string { return filepath.Join(Source(), "testdata", "rec") }

// Truth is a kept recording's NAME.json: the recording and what is known
// about it independently of JFR.
type Truth struct {
	Recording string         `json:"recording"`         // NAME.jfr (kept as NAME.jfr.gz when large)
	Program   string         `json:"program"`           // the source that ran
	Command   string         `json:"command"`           // how it ran
	Config    map[string]any `json:"config"`            // what the program was told to do
	Own       map[string]any `json:"own,omitempty"`     // the program's own counts and timers
	Results   string         `json:"results,omitempty"` // the program's own per-request output, beside it
	Prints    []Print        `json:"prints"`            // jfr print's output, beside it
	Host      Host           `json:"host"`
}

// Print is one kept output of `jfr print --json`: the events as jfr.Print
// decoded them, one JSON object (a jfr.Event) a line, gzipped.
type Print struct {
	File       string   `json:"file"`
	StackDepth int      `json:"stack_depth"`
	Events     []string `json:"events"` // nil: every type
	Count      int      `json:"count"`
}

// Host says where and when a recording was made.
type Host struct {
	Recorded   time.Time `json:"recorded"`
	CPUs       int       `json:"cpus"`
	LoadBefore string    `json:"loadavg_before"` // /proc/loadavg
	LoadAfter  string    `json:"loadavg_after"`
	JDK        string    `json:"jdk"`
}

// ReadTruth reads the kept NAME.json.
func ReadTruth(name string) (*Truth, error) {
	b, err := os.ReadFile(filepath.Join(KeptDir(), name+".json"))
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s.json: %w", name, err)
	}
	return &t, nil
}

// Kept returns the path of the kept recording NAME.jfr. A recording kept
// compressed (NAME.jfr.gz) is unpacked into dir first.
func Kept(name, dir string) (string, error) {
	p := filepath.Join(KeptDir(), name+".jfr")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	f, err := os.Open(p + ".gz")
	if err != nil {
		return "", fmt.Errorf("no kept recording %s (go run ./internal/jfr/internal/mkrecordings records them): %w", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s.jfr.gz: %w", name, err)
	}
	out := filepath.Join(dir, name+".jfr")
	w, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, zr); err != nil {
		w.Close()
		return "", fmt.Errorf("%s.jfr.gz: %w", name, err)
	}
	return out, w.Close()
}

// LoadAvg is the host's load average over 1, 5 and 15 minutes, as
// /proc/loadavg gives them ("" where it cannot be read): what a recording's
// Host keeps.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
