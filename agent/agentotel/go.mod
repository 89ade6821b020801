module github.com/latscope/latscope/agent/agentotel

go 1.25.0

require (
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/otel v1.40.0
	go.opentelemetry.io/otel/sdk v1.40.0
	go.opentelemetry.io/otel/trace v1.40.0
	golang.org/x/exp v0.0.0-20260813180055-c1d0aacb2297
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/metric v1.40.0 // indirect
	golang.org/x/sys v0.40.0 // indirect
)

replace (
	github.com/latscope/latscope/agent => ../
	github.com/latscope/latscope/internal/hostsig => ../../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../../internal/quantile
	github.com/latscope/latscope/tracelog => ../../tracelog
)
