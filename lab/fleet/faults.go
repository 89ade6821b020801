package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/lab"
)

// Lock timing of the lock phase: the lab's session holds the table lock
// for lockHold, then lets the queued lookups through for lockFree, and
// again, so that every minute of the fault has slow and fast DB calls.
const (
	lockHold = 400 * time.Millisecond
	lockFree = 100 * time.Millisecond
)

// postBurst asks the instance at addr for a burst of CPU work: n
// goroutines spinning for d.
func postBurst(ctx context.Context, addr string, d time.Duration, n int) error {
	q := url.Values{"for": {d.String()}, "goroutines": {strconv.Itoa(n)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/burn?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("burst on %s: %w", addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("burst on %s: %s", addr, resp.Status)
	}
	return nil
}

// postAlloc asks the instance at addr for an allocation loop: n
// goroutines allocating for d (POST /alloc), so that its garbage
// collector takes its CPU.
func postAlloc(ctx context.Context, addr string, d time.Duration, n int) error {
	q := url.Values{"for": {d.String()}, "goroutines": {strconv.Itoa(n)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/alloc?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("alloc on %s: %w", addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("alloc on %s: %s", addr, resp.Status)
	}
	return nil
}

// throttledPeriods reads nr_throttled of the cgroup (0 when unreadable).
func throttledPeriods(cg *hostsig.Cgroup) uint64 {
	b, err := os.ReadFile(filepath.Join(cg.Dir, "cpu.stat"))
	if err != nil {
		return 0
	}
	st, err := hostsig.ParseCPUStat(b, cg.Version)
	if err != nil {
		return 0
	}
	return st.Throttled
}

// lockUntil takes an ACCESS EXCLUSIVE lock on Table in a transaction on
// conn, holds it for lockHold, commits, waits lockFree, and again until
// end. It returns when the first lock was taken and the last released.
func lockUntil(ctx context.Context, conn *pgx.Conn, end time.Time) (from, to time.Time, err error) {
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			return from, to, fmt.Errorf("lock: %w", err)
		}
		if _, err := conn.Exec(ctx, "LOCK TABLE "+Table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			conn.Exec(context.Background(), "ROLLBACK")
			return from, to, fmt.Errorf("lock: %w", err)
		}
		if from.IsZero() {
			from = time.Now()
		}
		lab.Sleep(ctx, lockHold)
		if _, err := conn.Exec(context.Background(), "COMMIT"); err != nil {
			return from, to, fmt.Errorf("lock: commit: %w", err)
		}
		to = time.Now()
		lab.Sleep(ctx, lockFree)
	}
	return from, to, ctx.Err()
}

// stopFor stops process pid with SIGSTOP for d and continues it; the
// process is continued however the wait ends.
func stopFor(ctx context.Context, pid int, d time.Duration) (from, to time.Time, err error) {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return from, to, fmt.Errorf("SIGSTOP %d: %w", pid, err)
	}
	from = time.Now()
	lab.Sleep(ctx, d)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		return from, time.Now(), fmt.Errorf("SIGCONT %d: %w", pid, err)
	}
	return from, time.Now(), ctx.Err()
}

// sleepUntil waits until t or until ctx is done.
func sleepUntil(ctx context.Context, t time.Time) { lab.Sleep(ctx, time.Until(t)) }

// lockCycle holds an ACCESS EXCLUSIVE lock on Table for hold, releases it
// for free, and again until end (at least once).
func lockCycle(ctx context.Context, conn *pgx.Conn, hold, free time.Duration, end time.Time) error {
	for first := true; first || time.Now().Before(end); first = false {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "LOCK TABLE "+Table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			conn.Exec(context.Background(), "ROLLBACK")
			return err
		}
		lab.Sleep(ctx, hold)
		if _, err := conn.Exec(context.Background(), "COMMIT"); err != nil {
			return err
		}
		lab.Sleep(ctx, free)
	}
	return nil
}
