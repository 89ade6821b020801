package dbwaitreport_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
)

// The reports of real captures are golden files of package dbwait's tests
// (testdata/golden), which print them through this package; these tests
// pin the small parts.

// TestMs: three significant figures below 100 ms, whole milliseconds above.
func TestMs(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"}, {500 * time.Microsecond, "0.500"}, {2500 * time.Microsecond, "2.50"},
		{25 * time.Millisecond, "25.0"}, {250 * time.Millisecond, "250"}, {-2500 * time.Microsecond, "-2.50"},
	} {
		if got := dbwaitreport.Ms(tc.d); got != tc.want {
			t.Errorf("Ms(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestEvidence: the line names the event-free stretch, the runnable time
// and, without host samples, says so.
func TestEvidence(t *testing.T) {
	e := dbwait.Evidence{Gap: 40 * time.Millisecond, Runnable: 2 * time.Millisecond}
	want := "no trace events 40.0 ms (in the span), goroutine runnable 2.00 ms; no host samples"
	if got := dbwaitreport.Evidence(e); got != want {
		t.Errorf("Evidence = %q, want %q", got, want)
	}
}

// TestEmpty: a result with nothing joined prints its counts and no table
// rows, and its JSON has empty lists, not nulls.
func TestEmpty(t *testing.T) {
	r := &dbwait.Result{Options: dbwait.Options{Threshold: 10 * time.Millisecond}}
	var text bytes.Buffer
	if err := dbwaitreport.WriteText(&text, r, dbwaitreport.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DB spans: 0, 0 joined", "host: no samples", "no statement spent more than 10ms outside the DB"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(dbwaitreport.JSON(r))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"queries":[]`, `"unmatched":[]`, `"warnings":[]`, `"threshold_ms":10`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("the JSON lacks %s: %s", want, js)
		}
	}
}
