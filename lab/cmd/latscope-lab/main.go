// Command latscope-lab runs latscope's reproducible experiments on real
// parts — a demo service, a real upstream, a private PostgreSQL, closed-model
// load, fault injection — and checks the analyzer's predictions against
// re-measured runs. With no argument it runs the seed experiment. It is the
// lab module's binary, apart from the product's latscope: the services,
// burners and fault injectors it starts are this binary run again. See
// docs/lab.md.
package main

import (
	"os"

	"github.com/latscope/latscope/internal/cli"
)

func init() {
	cli.Name = "latscope-lab"
	cli.Register("version", cli.VersionSummary, cli.Version)
}

func main() { os.Exit(cli.Main(os.Args[1:])) }
