// Package pgtest starts throwaway PostgreSQL clusters for tests.
//
// Start gives each test its own cluster (initdb costs about a second).
// Shared gives every test in a binary the same cluster; call Main from
// TestMain so that it is stopped at the end.
package pgtest

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/tier"
)

// startTimeout bounds initdb plus pg_ctl start.
const startTimeout = 2 * time.Minute

// Start starts a cluster with default options and stops it in t.Cleanup.
// It skips t, naming the reason, only when the machine has no PostgreSQL
// binaries or, when running as root, no postgres OS user; any other failure
// fails t.
func Start(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	tier.Require(t, "a PostgreSQL test cluster")
	c, err := start()
	if err != nil {
		skipOrFatal(t, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the test cluster: %v", err)
		}
	})
	return c
}

// shared holds the binary-wide cluster of Shared.
var shared struct {
	once sync.Once
	c    *pgcluster.Cluster
	err  error
}

// Shared returns one cluster for the whole test binary, started on first
// use and stopped by Main. Tests must leave it as they found it (use their
// own tables or schemas). It skips like Start.
func Shared(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	tier.Require(t, "a PostgreSQL test cluster")
	shared.once.Do(func() { shared.c, shared.err = start() })
	if shared.err != nil {
		skipOrFatal(t, shared.err)
	}
	return shared.c
}

// Main runs the tests and then stops the Shared cluster, if one was started:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			os.Stderr.WriteString("pgtest: stopping the shared cluster: " + err.Error() + "\n")
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// start sweeps clusters left by crashed test binaries and starts a new one.
func start() (*pgcluster.Cluster, error) {
	_, _ = pgcluster.Sweep() // best effort: leftovers of others are not our failure
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return pgcluster.Start(ctx, pgcluster.Options{})
}

// skipOrFatal skips for a missing PostgreSQL installation and fails for
// anything else.
func skipOrFatal(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, pgcluster.ErrNoBinaries) || errors.Is(err, pgcluster.ErrNoPostgresUser) {
		t.Skipf("SKIP: this machine cannot run a PostgreSQL test cluster: %v", err)
	}
	t.Fatalf("starting a PostgreSQL test cluster: %v", err)
}
