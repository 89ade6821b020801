// Package otelcol tests the OpenTelemetry bridge (agent/agentotel) against
// an OpenTelemetry collector's own OTLP receiver: a service as teams write
// it exports its spans over OTLP/gRPC on loopback, as it would to a
// collector or Jaeger, and the trace ID of the slowest span the receiver
// took is the one `latscope analyze --trace-id` is given.
//
// A module of its own, outside the workspace (go.work): the collector's
// modules would otherwise raise the versions the workspace selects for the
// product's packages. Run it with
//
//	cd agent/internal/otelcol && GOWORK=off LATSCOPE_TIER=timing go test -count=1 .
//
// (test.sh runs it with the busy-host timing tests).
package otelcol
