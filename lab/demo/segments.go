package demo

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The segments below are separate, non-inlined functions so that every wait
// and every CPU sample in a trace has one of them as its application frame:
// demo.callUpstream, demo.queryDB, demo.sharedSection (and demo.cpuWork).

// callUpstream is the upstream segment: one blocking GET, body read to the end.
//
//go:noinline
func callUpstream(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("upstream %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("upstream %s: read body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("upstream %s: status %s", url, resp.Status)
	}
	return nil
}

// queryDB is the db segment: one statement through the pool. Waiting for a
// free connection, when the pool is exhausted, happens in here too.
//
//go:noinline
func queryDB(ctx context.Context, pool *pgxpool.Pool, sql string) error {
	if _, err := pool.Exec(ctx, sql); err != nil {
		return fmt.Errorf("db: %s: %w", sql, err)
	}
	return nil
}

// sharedState is what every request updates under one lock.
type sharedState struct {
	mu      sync.Mutex
	updates uint64
	digest  [32]byte
}

// sharedSection is the shared segment: iters SHA-256 hashes and an update of
// the shared state. Unless fixed, the hashing happens while holding the
// lock, so concurrent requests queue behind it; fixed hashes first and holds
// the lock for the update only.
//
//go:noinline
func sharedSection(st *sharedState, iters int, fixed bool) {
	if !fixed {
		st.mu.Lock()
	}
	var sum [32]byte
	for range iters {
		sum = sha256.Sum256(sum[:])
	}
	if fixed {
		st.mu.Lock()
	}
	st.updates++
	for i := range sum {
		st.digest[i] ^= sum[i]
	}
	st.mu.Unlock()
}
