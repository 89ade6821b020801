// Package tier splits latscope's tests in two.
//
// The fast tier is plain `go test ./...`: analysers, parsers and writers on
// traces and recordings that the real runtime recorded once and the repo
// keeps (with a command to record them again), no server, no network, no
// clock. It runs in parallel and gives the same result on a quiet host and
// on a busy one.
//
// The timing tier is every test whose point is timing or a real server:
// recording live and judging the accuracy of what was recorded, the labs,
// the agent's overhead, real PostgreSQL, MariaDB, Prometheus, a JVM and
// Chromium. Such a test calls Timing first; it runs when the environment
// variable LATSCOPE_TIER is "timing" (or "all"), which ./test.sh sets for
// its second step, one package at a time.
package tier

import (
	"os"
	"testing"
)

// Env is the environment variable that selects the timing tier.
const Env = "LATSCOPE_TIER"

// On reports whether the timing tier runs in this process.
func On() bool {
	switch os.Getenv(Env) {
	case "timing", "all":
		return true
	}
	return false
}

// Timing marks t as a test of the timing tier: outside it, t is skipped
// with a reason that says how to run it.
func Timing(t testing.TB) {
	t.Helper()
	if !On() {
		t.Skip("timing tier (live recording, real servers or timing): runs with " + Env + "=timing, as ./test.sh does")
	}
}

// Busy marks t as a test of the timing tier that holds on a busy host: its
// checks were judged with a CPU burner on every core, and it spends most of
// its time waiting (on phases, servers, a clock), not computing. ./test.sh
// runs these beside the fuzz targets and the fast tier, and the other
// timing tests one package at a time after them, on a quieter host.
func Busy(t testing.TB) {
	t.Helper()
	Timing(t)
}

// Require is called by helpers that start a server, a JVM or a browser, or
// record live: in the fast tier it fails the test, which should have
// called Timing.
func Require(t testing.TB, what string) {
	t.Helper()
	if !On() {
		t.Fatalf("%s belongs to the timing tier: call tier.Timing(t) at the top of this test", what)
	}
}
