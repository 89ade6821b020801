package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestTraceID picks requests by trace ID on the kept trace of a service
// with the agent's OpenTelemetry bridge (testdata/corpus/otel-bridge): a
// trace ID the client sent finds its request, of the route the client
// asked; a malformed ID and one no request carries exit 2 with one line
// naming --trace-id.
func TestTraceID(t *testing.T) {
	t.Parallel()
	const trace = "../../testdata/corpus/otel-bridge.trace"
	var truth struct {
		App      []string          `json:"app"`
		TraceIDs map[string]string `json:"trace_ids"`
	}
	b, err := os.ReadFile("../../testdata/corpus/otel-bridge.truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth.TraceIDs) == 0 || len(truth.App) == 0 {
		t.Fatalf("the truth lists no trace IDs or app: %s", b)
	}
	n := 0
	for id, route := range truth.TraceIDs {
		if n++; n > 3 {
			break
		}
		stdout, stderr, err := runCLI(t, "analyze", "--app", truth.App[0], "--trace-id", id, trace)
		if err != nil {
			t.Fatalf("--trace-id %s: %v\n%s", id, err, stderr)
		}
		if !strings.Contains(stdout, route+": 1 requests") || !strings.Contains(stdout, id) {
			t.Errorf("--trace-id %s: want the one request of %s, with its trace ID:\n%s", id, route, stdout)
		}
	}
	for _, tc := range []struct{ id, want string }{
		{"xyz", `--trace-id: trace ID "xyz": want 32 hex digits`},
		{"00000000000000000000000000000001", "--trace-id 00000000000000000000000000000001: no request"},
	} {
		code, stderr := runExit(t, "analyze", "--trace-id", tc.id, trace)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--trace-id %s: exit %d, stderr %q; want 2 and one line with %q", tc.id, code, stderr, tc.want)
		}
	}
}
