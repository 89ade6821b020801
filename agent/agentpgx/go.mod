module github.com/latscope/latscope/agent/agentpgx

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.13.0
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000 // indirect
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000 // indirect
	golang.org/x/exp v0.0.0-20260813180055-c1d0aacb2297 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace (
	github.com/latscope/latscope/agent => ../
	github.com/latscope/latscope/internal/hostsig => ../../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../../internal/quantile
	github.com/latscope/latscope/tracelog => ../../tracelog
)
