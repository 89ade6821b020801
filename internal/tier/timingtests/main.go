// Command timingtests lists the tests of the timing tier (those whose body
// calls tier.Timing) for ./test.sh: the first line is a -run pattern that
// matches exactly their names, each further line a package that holds one.
//
//	go run ./internal/tier/timingtests [DIR]
package main

import (
	"fmt"
	"os"

	"github.com/latscope/latscope/internal/tier"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	tests, err := tier.List(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timingtests:", err)
		os.Exit(2)
	}
	fmt.Println(tests.Pattern())
	for _, p := range tests.Packages() {
		fmt.Println(p)
	}
}
