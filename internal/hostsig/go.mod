module github.com/latscope/latscope/internal/hostsig

go 1.25.0

require github.com/latscope/latscope/tracelog v0.0.0-00010101000000-000000000000

replace github.com/latscope/latscope/tracelog => ../../tracelog
