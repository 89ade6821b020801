package triagereport

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/triage"
	"github.com/latscope/latscope/internal/triage/promtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// replay serves the answers of a real Prometheus that package triage's
// tests keep (internal/triage/testdata/NAME.prom.json.gz, promtest.Replay).
// They are recorded there, by triage's tests: with promtest.RetraceEnv
// set the test is skipped, so that it does not rewrite them with its
// fewer queries.
func replay(t *testing.T, name string) string {
	t.Helper()
	if os.Getenv(promtest.RetraceEnv) == "1" {
		t.Skip("the recorded answers are package triage's: record them there")
	}
	return promtest.Replay(t, filepath.Join("..", "..", "..", "triage", "testdata", name), nil)
}

// instance returns r's instance named name, or nil.
func instance(r *triage.Report, name string) *triage.InstanceReport {
	for i := range r.Instances {
		if r.Instances[i].Name == name {
			return &r.Instances[i]
		}
	}
	return nil
}

// bars counts the timeline bars of colour c in an HTML page (a bad
// step's background has the colour too, but no title).
func bars(page, c string) int { return strings.Count(page, `fill="`+c+`"><title>`) }

// TestGoldens writes the reports of triage's real-Prometheus cases (the
// known series of promtest: triage's TestPrometheus) and compares the
// text and JSON with testdata/NAME.txt and NAME.json; the HTML page is
// self-contained and marks the bad steps.
func TestGoldens(t *testing.T) {
	base := replay(t, "known")
	t0 := promtest.T0
	for _, c := range []struct {
		name, job string
		hours     int
		signal    string
		threshold time.Duration
	}{
		{"local", "local", 6, "", 50 * time.Millisecond},
		{"shared", "shared", 2, "", 50 * time.Millisecond},
		{"stopped", "stopped", 4, "", 50 * time.Millisecond},
		{"held", "held", 2, "request", 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := triage.Run(context.Background(), triage.Config{URL: base, Job: c.job, Start: t0, End: t0.Add(time.Duration(c.hours) * time.Hour),
				Threshold: c.threshold, Signal: c.signal})
			if err != nil {
				t.Fatal(err)
			}
			checkWriters(t, c.name, r)
		})
	}
}

// checkWriters compares the text and JSON of r with testdata/NAME.txt and
// NAME.json, and checks that the HTML page is self-contained.
func checkWriters(t *testing.T, name string, r *triage.Report) {
	t.Helper()
	var text, js, page bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/"+name+".txt", text.Bytes(), *update)
	golden.Check(t, "testdata/"+name+".json", js.Bytes(), *update)
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	// the product's page: its sections linked from the header (#anchors),
	// nothing fetched, no script
	if n := strings.Count(h, `<svg class="timeline"`); n != len(r.Instances) || strings.Contains(h, "<script") || strings.Contains(h, "src=") || regexp.MustCompile(`href="[^#]`).MatchString(h) {
		t.Errorf("HTML page: %d timelines for %d instances, or a script or external resource", n, len(r.Instances))
	}
	if bad := bars(h, badColor); bad != len(r.BadSteps) && r.Verdict.Scope == "local" {
		t.Errorf("HTML page marks %d bad bars, want %d", bad, len(r.BadSteps))
	}
}
