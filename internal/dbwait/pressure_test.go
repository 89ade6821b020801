package dbwait_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
)

// TestDBHostPressureDecides (issue 34, item 1): given the database host's
// own CPU pressure series (its metrics: node_exporter's PSI from
// Prometheus), the hedge of a network verdict follows it instead of this
// host's. The tester's quota + proxy capture ran its database on the
// traced host, so that host's PSI, logged in the trace by the agent's
// sampler every 100 ms with its wall-clock time, is the database host's
// real series: with it every network verdict past the usual path whose
// scrape interval was under pressure for half its length is hedged, in
// words that name the database host's pressure, and no other. A series
// over the same times that never rose — a database host that never
// waited for a CPU — hedges none, though this host was pressed, and says
// why. (The statements are lengthened as in TestNetworkOrDBCPU, so that
// no network floor stands and the hedge is not ruled out by the usual
// path.)
func TestDBHostPressureDecides(t *testing.T) {
	c := capture{readIndependent(t, "quotaproxy.trace.gz"), readIndependent(t, "quotaproxy.postgresql.json.gz")}
	real := &dbwait.Pressure{Source: "the capture's own host samples"}
	for _, s := range hostSamples(t, c.trace) {
		if s.Has(hostsig.SourceSystemPSI) {
			real.Samples = append(real.Samples, dbwait.PressureSample{At: s.Wall, Some: s.SystemSome})
		}
	}
	if len(real.Samples) < 10 {
		t.Fatalf("%d host samples with PSI in the capture", len(real.Samples))
	}
	calm := &dbwait.Pressure{Source: "a host that never waited"}
	for _, s := range real.Samples {
		calm.Samples = append(calm.Samples, dbwait.PressureSample{At: s.At, Some: real.Samples[0].Some})
	}
	base := analyse2(t, c)

	r := lengthened(t, c, base, real)
	hedged, calmNet := 0, 0
	for _, q := range r.Queries {
		if q.Verdict != dbwait.Network {
			continue
		}
		p := q.Evidence.DBHostPressure
		if p == nil {
			t.Errorf("network verdict without the database host's pressure: %s", q.Rule)
			continue
		}
		busy := 2*p.Some >= p.Interval
		switch {
		case busy && q.Alternative == dbwait.DBCPU && q.Confidence == dbwait.Low && strings.Contains(q.Rule, "network or db-cpu") &&
			strings.Contains(q.Rule, "the database host's CPU pressure (PSI some +") && strings.Contains(q.Rule, "the capture's own host samples"):
			hedged++
		case !busy && q.Alternative == dbwait.Inside && strings.Contains(q.Rule, "was under half the interval"):
			calmNet++
		default:
			t.Errorf("pressure %v of %v: %v %v (%s)", p.Some, p.Interval, q.Alternative, q.Confidence, q.Rule)
		}
	}
	t.Logf("the real series: %d hedged, %d network verdicts in calm intervals", hedged, calmNet)
	if hedged == 0 || r.Summary.NetworkOrDBCPU != hedged {
		t.Errorf("%d hedged, summary %d: want some, the same", hedged, r.Summary.NetworkOrDBCPU)
	}
	if cov := r.DBHostPressure; cov == nil || cov.Covered != cov.Statements || cov.Samples != len(real.Samples) {
		t.Errorf("coverage %+v: want every statement covered by the %d samples", cov, len(real.Samples))
	}
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(dbwaitreport.JSON(r)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"db_host_pressure":{"source":"the capture's own host samples"`) || !strings.Contains(js.String(), `"db_host_pressure":{"some_ms":`) {
		t.Errorf("the JSON lacks the database host's pressure")
	}

	r = lengthened(t, c, base, calm)
	for _, q := range r.Queries {
		if q.Alternative != dbwait.Inside {
			t.Errorf("a calm database host, yet hedged: %s", q.Rule)
		}
	}
	if r.Summary.NetworkOrDBCPU != 0 {
		t.Errorf("a calm database host: %d network or db-cpu", r.Summary.NetworkOrDBCPU)
	}
}

// lengthened analyses c with two of every three statements base called
// network 20 ms longer in the database (TestNetworkOrDBCPU) and the
// database host's pressure p.
func lengthened(t *testing.T, c capture, base *dbwait.Result, p *dbwait.Pressure) *dbwait.Result {
	t.Helper()
	lengthen := map[pglog.TraceParent]bool{}
	n := 0
	for _, q := range base.Queries {
		if q.Verdict == dbwait.Network {
			if n++; n%3 != 0 {
				lengthen[q.TraceParent] = true
			}
		}
	}
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "quotaproxy.trace", c.trace)
	a.DBHostPressure(p)
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) {
		if lengthen[s.TraceParent] {
			s.Duration += 20 * time.Millisecond
			s.Start = s.End.Add(-s.Duration)
		}
		a.Statement(s)
	})
	r, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if r.NetworkFloor != 0 {
		t.Fatalf("network floor %v, want none", r.NetworkFloor)
	}
	return r
}

// hostSamples returns the host samples the agent logged in a trace.
func hostSamples(t *testing.T, b []byte) []hostsig.Sample {
	t.Helper()
	rd, err := trace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []hostsig.Sample
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() != trace.EventLog || ev.Log().Category != hostsig.LogCategory {
			continue
		}
		s, err := hostsig.ParseLog(ev.Log().Message)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
}

// TestPressureCoverage: statements outside the series, or after the
// counter went back (the exporter restarted), are not covered, and a
// warning says how many were and why the others were not.
func TestPressureCoverage(t *testing.T) {
	c := capture{readIndependent(t, "quotaproxy.trace.gz"), readIndependent(t, "quotaproxy.postgresql.json.gz")}
	var samples []hostsig.Sample
	for _, s := range hostSamples(t, c.trace) {
		if s.Has(hostsig.SourceSystemPSI) {
			samples = append(samples, s)
		}
	}
	half := len(samples) / 2
	p := &dbwait.Pressure{Source: "half a series, then a reset"}
	for i, s := range samples {
		some := s.SystemSome
		if i > half {
			some -= samples[half].SystemSome // the counter restarted from 0
		}
		p.Samples = append(p.Samples, dbwait.PressureSample{At: s.Wall, Some: some})
	}
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "quotaproxy.trace", c.trace)
	a.DBHostPressure(p)
	feedPG(t, a, c.pglog)
	r, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	cov := r.DBHostPressure
	if cov == nil || cov.Covered == 0 || cov.Covered >= cov.Statements {
		t.Fatalf("coverage %+v: want some statements covered, not all", cov)
	}
	found := false
	for _, w := range r.Warnings {
		if strings.Contains(w.Error(), "the database host's CPU pressure (half a series, then a reset") && strings.Contains(w.Error(), "after a counter reset") {
			found = true
		}
	}
	if !found {
		t.Errorf("no coverage warning in %v", r.Warnings)
	}
	t.Logf("covered %d of %d", cov.Covered, cov.Statements)
}
