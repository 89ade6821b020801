package main

import (
	"context"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/cli"
)

func init() {
	cli.Name = "latscope"
	cli.Examples = usageExamples
	cli.Register("version", cli.VersionSummary, cli.Version)
	cli.Register("lab", "the lab is a binary of its own : go run ./lab/cmd/latscope-lab (docs/lab.md)", runLabMoved)
	cli.Register("proxy", "the network-delay proxy is the lab's : go run ./lab/cmd/latscope-lab proxy (docs/dbwait.md)", runLabMoved)
}

const usageExamples = `
examples:
  latscope demo-trace -o demo.trace    write a trace of a small demo service
  latscope analyze demo.trace          per-request latency budget from a Go execution trace
  latscope load -c 20 -d 30s URL       closed-model load against URL
  go run ./lab/cmd/latscope-lab        the seed experiment end to end (upstream, PostgreSQL, load), from a clone`

// runLabMoved answers `latscope lab …` and `latscope proxy …`, which the
// product binary no longer holds: the lab, its services and its fault
// injectors are the lab module's binary, latscope-lab, with the same
// arguments.
func runLabMoved(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := cli.NewFlagSet("lab", "lab|proxy ...", stderr)
	cli.UsageWith(fs, stderr, "lab|proxy ...", "\nexamples:\n  go run ./lab/cmd/latscope-lab            the seed experiment, from a clone of the repository\n  go run ./lab/cmd/latscope-lab proxy -h   the network-delay proxy\n")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return fs.Parse(args[:1])
	}
	return fmt.Errorf("not in this binary: the lab and its proxy are latscope-lab's (the lab module, ./lab): from a clone, go run ./lab/cmd/latscope-lab with the same arguments (docs/lab.md)")
}
