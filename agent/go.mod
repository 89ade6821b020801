module github.com/latscope/latscope/agent

go 1.25.0

require (
	github.com/latscope/latscope/internal/hostsig v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/internal/quantile v0.0.0-00010101000000-000000000000
	github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000
	golang.org/x/exp v0.0.0-20260813180055-c1d0aacb2297
)

replace (
	github.com/latscope/latscope/internal/hostsig => ../internal/hostsig
	github.com/latscope/latscope/internal/quantile => ../internal/quantile
	github.com/latscope/latscope/tracelog => ../tracelog
)
