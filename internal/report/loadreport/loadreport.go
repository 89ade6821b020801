// Package loadreport prints the report of `latscope load` (a closed
// loadgen.Report) for people, as an aligned table, and as one JSON object
// with stable field names (docs/load.md).
package loadreport

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/units"
)

// WriteText prints r as an aligned table for people.
func WriteText(w io.Writer, r *loadgen.Report) error {
	var b strings.Builder
	row := func(label, format string, args ...any) {
		termsafe.Fprintf(&b, "%-10s"+format+"\n", append([]any{label}, args...)...)
	}
	row("requests", "%d  (excluded: %d warm-up; late %d, dropped %d)", r.Requests, r.Warmup, r.Late, r.Dropped)
	row("window", "%.3f s  (%s to %s)", r.Window.Seconds(), stamp(r.Start), stamp(r.End))
	if r.Errors == 0 {
		row("rps", "%.2f", r.RPS)
	} else { // failures are not throughput: a refused connection fails fast
		row("rps", "%.2f successful, %.2f failed", r.RPS, r.ErrorRPS)
	}
	names, values := latencyCells(r.Latency)
	row("latency", "%s", names)
	row("  (ms)", "%s", values)
	row("bytes in", "%d", r.BytesIn)
	row("codes", "%s", codeList(r.Codes))
	row("errors", "%s%s", errorCount(r), distinct(r))
	for _, e := range r.TopErrors {
		row("", "%6d  %s", e.Count, e.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// latencyCells returns the latency table's header and value rows, right
// aligned in columns wide enough for the largest value.
func latencyCells(l loadgen.Latencies) (names, values string) {
	cells := [][2]string{
		{"min", fmt.Sprintf("%.3f", units.Ms(l.Min))}, {"mean", fmt.Sprintf("%.3f", units.Ms(l.Mean))},
		{"p50", fmt.Sprintf("%.3f", units.Ms(l.P50))}, {"p90", fmt.Sprintf("%.3f", units.Ms(l.P90))},
		{"p99", fmt.Sprintf("%.3f", units.Ms(l.P99))}, {"max", fmt.Sprintf("%.3f", units.Ms(l.Max))},
	}
	width := 9
	for _, c := range cells {
		width = max(width, len(c[1])+2)
	}
	var n, v strings.Builder
	for _, c := range cells {
		fmt.Fprintf(&n, "%*s", width, c[0])
		fmt.Fprintf(&v, "%*s", width, c[1])
	}
	return n.String(), v.String()
}

// stamp formats t in UTC to the millisecond; "-" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// codeList is "200: 98, 500: 2" in code order; "-" for none.
func codeList(codes map[int]int) string {
	if len(codes) == 0 {
		return "-"
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		parts = append(parts, fmt.Sprintf("%d: %d", c, codes[c]))
	}
	return strings.Join(parts, ", ")
}

// errorCount is "0", or "3 of 8 (37.5%)".
func errorCount(r *loadgen.Report) string {
	if r.Errors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d of %d (%.1f%%)", r.Errors, r.Requests, 100*float64(r.Errors)/float64(r.Requests))
}

func distinct(r *loadgen.Report) string {
	switch {
	case r.DistinctErrors == 0:
		return ""
	case r.DistinctErrors == 1:
		return ""
	case r.DistinctErrors > len(r.TopErrors):
		return fmt.Sprintf("  (%d distinct messages, top %d:)", r.DistinctErrors, len(r.TopErrors))
	default:
		return fmt.Sprintf("  (%d distinct messages)", r.DistinctErrors)
	}
}

// jsonReport fixes the field names of the JSON report; durations in
// milliseconds carry a _ms suffix, the window is in seconds.
type jsonReport struct {
	Requests       int            `json:"requests"`
	Errors         int            `json:"errors"`
	Warmup         int            `json:"warmup"`
	Late           int            `json:"late"`
	Dropped        int            `json:"dropped"`
	RPS            float64        `json:"rps"`
	ErrorRPS       float64        `json:"error_rps"`
	MinMS          float64        `json:"min_ms"`
	MeanMS         float64        `json:"mean_ms"`
	P50MS          float64        `json:"p50_ms"`
	P90MS          float64        `json:"p90_ms"`
	P99MS          float64        `json:"p99_ms"`
	MaxMS          float64        `json:"max_ms"`
	WindowS        float64        `json:"window_s"`
	Start          time.Time      `json:"start,omitzero"`
	End            time.Time      `json:"end,omitzero"`
	BytesIn        int64          `json:"bytes_in"`
	Codes          map[string]int `json:"codes"`
	TopErrors      []jsonError    `json:"top_errors"`
	DistinctErrors int            `json:"distinct_errors"`
}

type jsonError struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// WriteJSON prints r as one indented JSON object with stable field names
// (see docs/load.md).
func WriteJSON(w io.Writer, r *loadgen.Report) error {
	l := r.Latency
	j := jsonReport{
		Requests: r.Requests, Errors: r.Errors, Warmup: r.Warmup, Late: r.Late, Dropped: r.Dropped,
		RPS: r.RPS, ErrorRPS: r.ErrorRPS,
		MinMS: units.Ms(l.Min), MeanMS: units.Ms(l.Mean), P50MS: units.Ms(l.P50), P90MS: units.Ms(l.P90), P99MS: units.Ms(l.P99), MaxMS: units.Ms(l.Max),
		WindowS: r.Window.Seconds(),
		Start:   r.Start.UTC(), End: r.End.UTC(),
		BytesIn:        r.BytesIn,
		Codes:          map[string]int{},
		TopErrors:      []jsonError{},
		DistinctErrors: r.DistinctErrors,
	}
	for c, n := range r.Codes {
		j.Codes[strconv.Itoa(c)] = n
	}
	for _, e := range r.TopErrors {
		j.TopErrors = append(j.TopErrors, jsonError(e))
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("loadreport: JSON report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
