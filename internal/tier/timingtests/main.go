// Command timingtests lists the tests of the timing tier (those whose body
// calls tier.Timing or tier.Busy) for ./test.sh: the first line is a -run
// pattern that matches exactly their names, each further line a package
// that holds one. -busy lists only those that call tier.Busy (they hold on
// a busy host), -quiet only those that call tier.Timing.
//
//	go run ./internal/tier/timingtests [-busy|-quiet] [DIR]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/latscope/latscope/internal/tier"
)

func main() {
	busy := flag.Bool("busy", false, "only the tests that call tier.Busy")
	quiet := flag.Bool("quiet", false, "only the tests that call tier.Timing")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	list := tier.List
	switch {
	case *busy && *quiet:
		fmt.Fprintln(os.Stderr, "timingtests: -busy and -quiet exclude each other")
		os.Exit(2)
	case *busy:
		list = tier.ListBusy
	case *quiet:
		list = tier.ListQuiet
	}
	tests, err := list(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timingtests:", err)
		os.Exit(2)
	}
	fmt.Println(tests.Pattern())
	for _, p := range tests.Packages() {
		fmt.Println(p)
	}
}
