module github.com/latscope/latscope

go 1.26.8

require (
	github.com/go-sql-driver/mysql v1.10.2
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/jackc/pgx/v5 v5.13.0
	github.com/pmezard/go-difflib v1.0.0
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.72.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.49.0 // indirect
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/java v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
)

replace (
	github.com/latscope/latscope/agent => ./agent
	github.com/latscope/latscope/internal/hostsig => ./internal/hostsig
	github.com/latscope/latscope/internal/quantile => ./internal/quantile
	github.com/latscope/latscope/java => ./java
	github.com/latscope/latscope/tracelog => ./tracelog
)
