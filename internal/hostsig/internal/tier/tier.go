// Package tier is the test tiers of the main module's internal/tier for
// this module's tests, which cannot import the main module: the same
// LATSCOPE_TIER variable, and the same tier.Timing call, which ./test.sh's
// timing step finds in every module's tests.
package tier

import (
	"os"
	"testing"
)

// Timing marks t as a test of the timing tier: unless LATSCOPE_TIER is
// "timing" or "all", t is skipped with a reason that says how to run it.
func Timing(t testing.TB) {
	t.Helper()
	if v := os.Getenv("LATSCOPE_TIER"); v != "timing" && v != "all" {
		t.Skip("timing tier (live recording, real servers or timing): runs with LATSCOPE_TIER=timing, as ./test.sh does")
	}
}
