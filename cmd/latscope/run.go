package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/latscope/latscope/internal/cli"
)

func init() {
	cli.Name = "latscope"
	cli.Examples = usageExamples
	cli.Register("version", cli.VersionSummary, cli.Version)
	cli.Register("lab", "moved: the lab is the binary latscope-lab (go run ./lab/cmd/latscope-lab; docs/lab.md)", moved("lab", nil, "docs/lab.md"))
	cli.Register("proxy", "moved: the network-delay proxy is latscope-lab proxy (docs/dbwait.md)", moved("proxy", []string{"proxy"}, "docs/dbwait.md, \"latscope-lab proxy\""))
}

const usageExamples = `
examples:
  latscope demo-trace -o demo.trace    write a trace of a small demo service
  latscope analyze demo.trace          per-request latency budget from a Go execution trace
  latscope load -c 20 -d 30s URL       closed-model load against URL
  go run ./lab/cmd/latscope-lab        the seed experiment end to end (upstream, PostgreSQL, load), from a clone`

// moved is the command name, which the product binary no longer holds:
// the lab, its services and its fault injectors are the lab module's
// binary, latscope-lab. It says the command to run instead — latscope-lab
// with the lab's words (sub, then the arguments given) — and where it is
// documented, and exits 2.
func moved(name string, sub []string, doc string) func(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return func(ctx context.Context, stdout, stderr io.Writer, args []string) error {
		run := func(args []string) string {
			return strings.Join(append([]string{"go run ./lab/cmd/latscope-lab"}, append(sub, args...)...), " ")
		}
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fs := cli.NewFlagSet(name, name+" ...", stderr)
			cli.UsageWith(fs, stderr, name+" ...", fmt.Sprintf("\nThe lab is a module and a binary of its own, latscope-lab, which the product binary does not link:\n  %s\nfrom a clone of the repository (%s).\n", run([]string{"-h"}), doc))
			return fs.Parse(args[:1])
		}
		instead := run(args)
		return fmt.Errorf("not in this binary: run `%s` from a clone of the repository (latscope-lab, the lab's binary; %s)", instead, doc)
	}
}
