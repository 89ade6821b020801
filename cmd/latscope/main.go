// Command latscope explains where a request's wall-clock time went: on CPU,
// waiting for the scheduler, or waiting off-CPU beneath a named frame of the
// application, and what a fix would change. See docs/ for each command.
package main

import (
	"os"

	"github.com/latscope/latscope/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
