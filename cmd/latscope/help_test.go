package main

import (
	"testing"

	"github.com/latscope/latscope/internal/cli/clitest"
)

// TestHelpOneDefault: no flag's help states two defaults ("(default:
// estimated from the trace) (default 0)"), in any command.
func TestHelpOneDefault(t *testing.T) {
	t.Parallel()
	clitest.HelpOneDefault(t)
}
