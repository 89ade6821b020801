package dbwait

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
)

// TestScoreNetworkOrDBCPU: an unaffected statement called "network or
// db-cpu" is not wrong only when the lab loaded the host the database
// shares; a plain network verdict is wrong either way.
func TestScoreNetworkOrDBCPU(t *testing.T) {
	host := &hostsig.Delta{}
	qs := []dbwait.Query{
		{Verdict: dbwait.Network, Alternative: dbwait.DBCPU, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Network, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Runnable, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Inside, Evidence: dbwait.Evidence{Host: host}},
	}
	c := &ConditionResult{Name: "baseline", cond: Conditions[0], Runs: []*RunResult{{res: &dbwait.Result{Queries: qs}}}}
	for _, tc := range []struct {
		busy          bool
		wrong, hedged int
	}{{false, 2, 0}, {true, 1, 1}} {
		s := score(c, false, tc.busy)
		if s.Unaffected != 4 || s.Wrong != tc.wrong || s.NetworkOrDBCPU != tc.hedged {
			t.Errorf("DB host busy %v: %d unaffected, %d wrong, %d network or db-cpu; want 4, %d, %d", tc.busy, s.Unaffected, s.Wrong, s.NetworkOrDBCPU, tc.wrong, tc.hedged)
		}
		if m := s.Matrix["unaffected"]; m["network"] != 2 || m[orDBCPU] != 1 {
			t.Errorf("matrix %v", m)
		}
	}
}

// TestScoreWithoutDBHost: where db-cpu is right (the database's quota),
// the same statements judged without the database host's recording are
// right when hedged "network or db-cpu", not when plainly network; with the
// recording only db-cpu is.
func TestScoreWithoutDBHost(t *testing.T) {
	host := &hostsig.Delta{}
	over := 50 * time.Millisecond
	with := []dbwait.Query{
		{Verdict: dbwait.DBCPU, Outside: over, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.DBCPU, Outside: over, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Network, Alternative: dbwait.DBCPU, Outside: over, Evidence: dbwait.Evidence{Host: host}},
	}
	without := []dbwait.Query{
		{Verdict: dbwait.Network, Alternative: dbwait.DBCPU, Outside: over, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Network, Outside: over, Evidence: dbwait.Evidence{Host: host}},
		{Verdict: dbwait.Network, Alternative: dbwait.DBCPU, Outside: over, Evidence: dbwait.Evidence{Host: host}},
	}
	var dbQuota Condition
	for _, c := range FaultConditions {
		if c.DBQuota > 0 {
			dbQuota = c
		}
	}
	opts := dbwait.Options{Threshold: 10 * time.Millisecond}
	rr := &RunResult{res: &dbwait.Result{Queries: with, Options: opts}, resNoDBHost: &dbwait.Result{Queries: without, Options: opts}}
	c := &ConditionResult{Name: dbQuota.Name, cond: dbQuota, Runs: []*RunResult{rr}}
	for _, tc := range []struct {
		withDBHost bool
		right      int
	}{{true, 2}, {false, 2}} {
		if s := score(c, tc.withDBHost, false); s.Affected != 3 || s.Right != tc.right || s.DBHost != tc.withDBHost {
			t.Errorf("with --dbhost %v: %d of %d right (DBHost %v), want %d of 3", tc.withDBHost, s.Right, s.Affected, s.DBHost, tc.right)
		}
	}
}
