package dbwait

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
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
	// the database host's recording: backend 7's run-queue counter rises
	// 40 ms in the pass at t0+90 ms, before the statement's timer starts
	// at t0+95 ms, inside its span [t0+50, t0+110] ms: of its 50 ms
	// difference 40 are the database host's (the truth's share, ≥ ½)
	t0 := time.Unix(1_800_000_000, 0)
	var rec strings.Builder
	rec.WriteString(dbhost.Header + " period_ns=10000000\n")
	for at := time.Duration(0); at <= 300*time.Millisecond; at += 10 * time.Millisecond {
		wait := time.Duration(0)
		if at >= 90*time.Millisecond {
			wait = 40 * time.Millisecond
		}
		fmt.Fprintf(&rec, "%d 7 %d\n", t0.Add(at).UnixNano(), wait)
	}
	dbh, err := dbhost.Read("rec", strings.NewReader(rec.String()))
	if err != nil {
		t.Fatal(err)
	}
	q := func(v, alt dbwait.Verdict) dbwait.Query {
		return dbwait.Query{Verdict: v, Alternative: alt, PID: 7, StartWall: t0.Add(50 * time.Millisecond), App: 60 * time.Millisecond,
			DBStart: t0.Add(95 * time.Millisecond), DBEnd: t0.Add(105 * time.Millisecond), DB: 10 * time.Millisecond, Outside: 50 * time.Millisecond,
			Evidence: dbwait.Evidence{Host: host}}
	}
	with := []dbwait.Query{q(dbwait.DBCPU, dbwait.Inside), q(dbwait.DBCPU, dbwait.Inside), q(dbwait.Network, dbwait.DBCPU)}
	without := []dbwait.Query{q(dbwait.Network, dbwait.DBCPU), q(dbwait.Network, dbwait.Inside), q(dbwait.Network, dbwait.DBCPU)}
	if b, ok := dbHostShare(dbh, with[0]); !ok || b != 40*time.Millisecond {
		t.Fatalf("the database host's share = %v, %v; want 40ms, true", b, ok)
	}
	var dbQuota Condition
	for _, c := range FaultConditions {
		if c.DBQuota > 0 {
			dbQuota = c
		}
	}
	opts := dbwait.Options{Threshold: 10 * time.Millisecond}
	rr := &RunResult{res: &dbwait.Result{Queries: with, Options: opts}, resNoDBHost: &dbwait.Result{Queries: without, Options: opts}, dbh: dbh}
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
