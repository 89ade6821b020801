module github.com/latscope/latscope/internal/quantile

go 1.25.0
