module github.com/latscope/latscope/agent/agentchi

go 1.25.0

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/latscope/latscope/agent v0.0.0-00010101000000-000000000000
)

require (
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000 // indirect
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000 // indirect
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000 // indirect
	golang.org/x/exp v0.0.0-20260813180055-c1d0aacb2297 // indirect
)

replace (
	github.com/latscope/latscope/agent => ../
	github.com/latscope/latscope/internal/hostsig => ../../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../../internal/quantile
	github.com/latscope/latscope/tracelog => ../../tracelog
)
