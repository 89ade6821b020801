module github.com/latscope/latscope/tracelog

go 1.25.0
