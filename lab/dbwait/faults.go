package dbwait

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/lab"
)

// holdLock takes an ACCESS EXCLUSIVE lock on Table in a transaction on
// conn and commits after hold.
func holdLock(ctx context.Context, conn *pgx.Conn, hold time.Duration) error {
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if _, err := conn.Exec(ctx, "LOCK TABLE "+Table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		conn.Exec(ctx, "ROLLBACK")
		return fmt.Errorf("lock: %w", err)
	}
	lab.Sleep(ctx, hold)
	if _, err := conn.Exec(context.Background(), "COMMIT"); err != nil {
		return fmt.Errorf("lock: commit: %w", err)
	}
	return nil
}

// PauseMarks are the wall-clock times of a pause fault.
type PauseMarks struct {
	Locked, Stopped, Unlocked, Continued time.Time
}

// pauseWhileLocked takes the lock, waits until a lookup waits on it,
// stops process pid, releases the lock after hold, and continues the
// process pause after stopping it. The process is always continued.
func pauseWhileLocked(ctx context.Context, conn *pgx.Conn, pid int, hold, pause time.Duration) (m PauseMarks, err error) {
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return m, fmt.Errorf("pause: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			conn.Exec(context.Background(), "ROLLBACK")
		}
	}()
	if _, err := conn.Exec(ctx, "LOCK TABLE "+Table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		return m, fmt.Errorf("pause: %w", err)
	}
	m.Locked = time.Now()
	if err := waitForWaiter(ctx, conn, time.Second); err != nil {
		return m, fmt.Errorf("pause: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return m, fmt.Errorf("pause: SIGSTOP %d: %w", pid, err)
	}
	m.Stopped = time.Now()
	defer func() {
		if cerr := syscall.Kill(pid, syscall.SIGCONT); cerr != nil && err == nil {
			err = fmt.Errorf("pause: SIGCONT %d: %w", pid, cerr)
		}
		m.Continued = time.Now()
	}()
	lab.Sleep(ctx, time.Until(m.Locked.Add(hold)))
	if _, err := conn.Exec(context.Background(), "COMMIT"); err != nil {
		return m, fmt.Errorf("pause: commit: %w", err)
	}
	committed = true
	m.Unlocked = time.Now()
	lab.Sleep(ctx, time.Until(m.Stopped.Add(pause)))
	return m, nil
}

// stops runs a StopFault: c.Cycles pauses of c.Pause, each while a lookup
// waits for its answer, recorded in rr.
func (r *runner) stops(ctx context.Context, c Condition, pid int, rr *RunResult) error {
	start := time.Now()
	for i := range c.Cycles {
		lab.Sleep(ctx, time.Until(start.Add(time.Duration(i)*(c.Pause+StopEvery))))
		m, err := pauseWhileLocked(ctx, r.conn, pid, 0, c.Pause)
		if !m.Stopped.IsZero() && !m.Continued.IsZero() {
			rr.addFault(fmt.Sprintf("SIGSTOP %v", c.Pause), m.Stopped, m.Continued)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waitForWaiter polls pg_locks until some session waits for a lock on
// Table.
func waitForWaiter(ctx context.Context, conn *pgx.Conn, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = '"+Table+"'::regclass").Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no lookup waited on the lock within %v", limit)
		}
		lab.Sleep(ctx, 2*time.Millisecond)
	}
}
