module github.com/latscope/latscope/agent/internal/e2e

go 1.26.8

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/jackc/pgx/v5 v5.13.0
	github.com/latscope/latscope v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/agent/agentgrpc v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/agent/agentotel v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/agent/agentpgx v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/agent/agentprom v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
	github.com/prometheus/client_golang v1.25.0
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.72.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	github.com/redis/go-redis/v9 v9.23.0
	go.uber.org/atomic v1.12.0 // indirect
	gorm.io/driver/postgres v1.6.3
	gorm.io/gorm v1.31.2
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/felixge/httpsnoop v1.1.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
)

replace (
	github.com/latscope/latscope => ../../..
	github.com/latscope/latscope/agent => ../..
	github.com/latscope/latscope/agent/agentgrpc => ../../agentgrpc
	github.com/latscope/latscope/agent/agentotel => ../../agentotel
	github.com/latscope/latscope/agent/agentpgx => ../../agentpgx
	github.com/latscope/latscope/agent/agentprom => ../../agentprom
	github.com/latscope/latscope/internal/hostsig => ../../../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../../../internal/quantile
	github.com/latscope/latscope/tracelog => ../../../tracelog
)
