package dbwait

import (
	"testing"

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
		s := score(c, tc.busy)
		if s.Unaffected != 4 || s.Wrong != tc.wrong || s.NetworkOrDBCPU != tc.hedged {
			t.Errorf("DB host busy %v: %d unaffected, %d wrong, %d network or db-cpu; want 4, %d, %d", tc.busy, s.Unaffected, s.Wrong, s.NetworkOrDBCPU, tc.wrong, tc.hedged)
		}
		if m := s.Matrix["unaffected"]; m["network"] != 2 || m[orDBCPU] != 1 {
			t.Errorf("matrix %v", m)
		}
	}
}
