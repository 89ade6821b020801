package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpOneDefault: no flag's help states two defaults ("(default:
// estimated from the trace) (default 0)"), in any command.
func TestHelpOneDefault(t *testing.T) {
	t.Parallel()
	two := regexp.MustCompile(`default.*\(default `)
	for name := range commands {
		args := append(strings.Fields(name), "-h")
		stdout, _, err := runCLI(t, args...)
		if err != nil {
			t.Errorf("%s -h: %v", name, err)
			continue
		}
		for _, line := range strings.Split(stdout, "\n") {
			if two.MatchString(line) {
				t.Errorf("latscope %s -h: two defaults: %s", name, strings.TrimSpace(line))
			}
		}
	}
}
