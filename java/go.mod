module github.com/latscope/latscope/java

go 1.25.0
