package dbwaitreport

import (
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/units"
)

// JSONResult is the JSON form of a dbwait.Result (`latscope dbwait --json`).
// Times are milliseconds (_ms); a host counter whose source was absent is
// null, with the reason under "absent".
type JSONResult struct {
	ThresholdMs   float64       `json:"threshold_ms"`
	Summary       JSONSummary   `json:"summary"`
	Verdicts      []JSONVerdict `json:"verdicts"`
	Host          JSONHost      `json:"host"`
	ClockOffsetMs float64       `json:"clock_offset_ms"`
	// NetworkFloorMs: the trace's usual wait outside the DB (the median
	// difference of the statements called network with high confidence);
	// 0 with fewer than 5 of them.
	NetworkFloorMs  float64 `json:"network_floor_ms"`
	FloorStatements int     `json:"network_floor_statements"`
	// DBHost: what the database host's recording covered; absent without
	// one.
	DBHost *JSONDBHost `json:"db_host,omitempty"`
	// DBHostPressure: what the database host's CPU pressure series
	// covered; absent without one.
	DBHostPressure *JSONPressure `json:"db_host_pressure,omitempty"`
	Queries        []JSONQuery   `json:"queries"`
	Unmatched      []JSONQuery   `json:"unmatched"`
	Warnings       []string      `json:"warnings"`
}

// JSONPressure is dbwait.PressureCoverage.
type JSONPressure struct {
	Source     string `json:"source"`
	From       string `json:"from,omitempty"`
	To         string `json:"to,omitempty"`
	Samples    int    `json:"samples"`
	Covered    int    `json:"covered"`
	Statements int    `json:"statements"`
}

// JSONPressureDelta is dbwait.PressureDelta: some task on the database host
// waited for a CPU SomeMs of IntervalMs.
type JSONPressureDelta struct {
	SomeMs     float64 `json:"some_ms"`
	IntervalMs float64 `json:"interval_ms"`
}

// JSONDBHost is dbwait.DBHostCoverage.
type JSONDBHost struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Backends   int    `json:"backends"`
	Covered    int    `json:"covered"`
	Statements int    `json:"statements"`
}

// JSONSummary is dbwait.Summary.
type JSONSummary struct {
	Spans         int     `json:"spans"`
	Matched       int     `json:"matched"`
	NoTraceParent int     `json:"regions_without_traceparent"`
	EndLogged     int     `json:"spans_ended_by_end_log"`
	EndWithout    int     `json:"end_logs_without_span"`
	Statements    int     `json:"statements"`
	Uncommented   int     `json:"statements_without_traceparent"`
	Over          int     `json:"over_threshold"`
	AppP50Ms      float64 `json:"app_p50_ms"`
	DBP50Ms       float64 `json:"db_p50_ms"`
	DiffP50Ms     float64 `json:"diff_p50_ms"`
	OverP50Ms     float64 `json:"over_threshold_diff_p50_ms"`
	// NetworkOrDBCPU: the network verdicts with db-cpu as their
	// alternative.
	NetworkOrDBCPU int `json:"network_or_db_cpu"`
}

// JSONVerdict is one row of the summary table.
type JSONVerdict struct {
	Verdict     dbwait.Verdict `json:"verdict"`
	Count       int            `json:"queries"`
	AppP50Ms    float64        `json:"app_p50_ms"`
	DBP50Ms     float64        `json:"db_p50_ms"`
	DiffP50Ms   float64        `json:"diff_p50_ms"`
	DiffTotalMs float64        `json:"diff_total_ms"`
}

// JSONHost is dbwait.HostTotals.
type JSONHost struct {
	Samples    int        `json:"samples"`
	InTrace    bool       `json:"in_trace"`
	IntervalMs float64    `json:"interval_ms"`
	Delta      *JSONDelta `json:"delta"`
}

// JSONDelta is a hostsig.Delta.
type JSONDelta struct {
	IntervalMs     float64           `json:"interval_ms"`
	NrThrottled    *uint64           `json:"nr_throttled"`
	ThrottledMs    *float64          `json:"throttled_ms"`
	CgroupPSIMs    *float64          `json:"cgroup_psi_some_ms"`
	SystemPSIMs    *float64          `json:"psi_some_ms"`
	StealMs        *float64          `json:"steal_ms"`
	CPUs           int               `json:"cpus,omitempty"` // CPUs steal is summed over; left out when unknown
	RunQueueWaitMs *float64          `json:"run_queue_wait_ms"`
	CPUMs          *float64          `json:"cpu_ms"`
	Absent         map[string]string `json:"absent,omitempty"`
}

// JSONQuery is a dbwait.Query.
type JSONQuery struct {
	AtMs        float64         `json:"at_ms"`
	Wall        *time.Time      `json:"wall,omitempty"`
	Region      string          `json:"region"`
	Goroutine   int64           `json:"goroutine"`
	Task        uint64          `json:"task"`
	TraceParent string          `json:"traceparent"`
	AppMs       float64         `json:"app_ms"`
	DBMs        float64         `json:"db_ms"`
	DiffMs      float64         `json:"diff_ms"`
	LockWaitMs  float64         `json:"lock_wait_ms"`
	PID         int             `json:"backend_pid,omitempty"`
	SQL         string          `json:"sql,omitempty"`
	Verdict     *dbwait.Verdict `json:"verdict,omitempty"`
	Rule        string          `json:"rule,omitempty"` // what decided the verdict
	// Confidence: "high" (two instruments agree, or the goroutine was
	// measured directly), "medium" (one decided), "low" (counters over a
	// longer interval, or causes ruled out); "" for unknown.
	Confidence string `json:"confidence,omitempty"`
	// Alternative: a verdict the evidence could not rule out, named in
	// the rule: "db-cpu" beside "network" (confidence low) when no
	// recording of the database host checked it and this host was under
	// CPU pressure; left out when there is none.
	Alternative *dbwait.Verdict `json:"alternative,omitempty"`
	Evidence    *JSONEvidence   `json:"evidence,omitempty"`
}

// JSONEvidence is dbwait.Evidence.
type JSONEvidence struct {
	GapMs      float64 `json:"no_events_ms"`
	RunnableMs float64 `json:"runnable_ms"`
	Placed     bool    `json:"placed"`
	// BeforeDBMs and AfterDBMs: the outside time before the database's
	// start and after its end, when placed (dbwait.Evidence.BeforeDB, AfterDB).
	BeforeDBMs *float64 `json:"before_db_ms,omitempty"`
	AfterDBMs  *float64 `json:"after_db_ms,omitempty"`
	// ProbeLateMs: how long the agent's CPU-availability probe woke late in
	// the outside time; null when the trace has no probe.
	ProbeLateMs *float64 `json:"probe_late_ms"`
	// ProbeTailMs: the part of it in the stall that ended as the answer
	// came, the only one that can have delayed it; null without the probe.
	ProbeTailMs *float64 `json:"probe_late_at_answer_ms"`
	// ProbeHeadMs: the part in the stall that ended as the query left.
	ProbeHeadMs *float64 `json:"probe_late_at_send_ms"`
	// FloorStallMs: how much of the wait past the trace's network floor
	// (or the usual statement's difference) the probe's stalls explain
	// (dbwait.Evidence.FloorStall); left out when the statement did not wait past
	// it plus the threshold.
	FloorStallMs *float64 `json:"floor_stall_ms,omitempty"`
	// DBHostWaitMs: how long the statement's backend waited on the database
	// host's run queue outside its timer, as the recording placed it
	// (dbwait.Evidence.DBHostWait);
	// left out without a recording of the database host covering it.
	DBHostWaitMs *float64 `json:"db_host_wait_ms,omitempty"`
	// DBHostPressure: the database host's CPU pressure over the scrape
	// interval covering the span (dbwait.Evidence.DBHostPressure); left out
	// without its series.
	DBHostPressure *JSONPressureDelta `json:"db_host_pressure,omitempty"`
	// BusyMs: how long every P of the process ran a goroutine.
	BusyMs float64    `json:"every_p_busy_ms"`
	Host   *JSONDelta `json:"host"`
}

// JSON returns the JSON form of r.
func JSON(r *dbwait.Result) *JSONResult {
	s := r.Summary
	j := &JSONResult{
		ThresholdMs: units.Ms(r.Options.Threshold),
		Summary: JSONSummary{
			Spans: s.Spans, Matched: s.Matched, NoTraceParent: s.NoTraceParent, EndLogged: s.EndLogged, EndWithout: s.EndWithoutSpan, Statements: s.Statements,
			Uncommented: s.Uncommented, Over: s.Over, AppP50Ms: units.Ms(s.AppP50), DBP50Ms: units.Ms(s.DBP50),
			DiffP50Ms: units.Ms(s.OutsideP50), OverP50Ms: units.Ms(s.OverP50), NetworkOrDBCPU: s.NetworkOrDBCPU,
		},
		Host:           JSONHost{Samples: r.Host.Samples, InTrace: r.Host.InTrace, IntervalMs: units.Ms(r.Host.Interval), Delta: jsonDelta(r.Host.Delta)},
		ClockOffsetMs:  units.Ms(r.ClockOffset),
		NetworkFloorMs: units.Ms(r.NetworkFloor), FloorStatements: r.FloorStatements,
		DBHost:         jsonDBHost(r.DBHost),
		DBHostPressure: jsonPressure(r.DBHostPressure),
		Queries:        []JSONQuery{},
		Unmatched:      []JSONQuery{},
		Warnings:       []string{},
	}
	for v, vs := range s.ByVerdict {
		j.Verdicts = append(j.Verdicts, JSONVerdict{Verdict: dbwait.Verdict(v), Count: vs.Count, AppP50Ms: units.Ms(vs.AppP50),
			DBP50Ms: units.Ms(vs.DBP50), DiffP50Ms: units.Ms(vs.OutsideP50), DiffTotalMs: units.Ms(vs.OutsideSum)})
	}
	for _, q := range r.Queries {
		jq := jsonQuery(r, q)
		v := q.Verdict
		jq.Verdict, jq.Rule, jq.Confidence = &v, q.Rule, q.Confidence.String()
		if q.Alternative != dbwait.Inside {
			alt := q.Alternative
			jq.Alternative = &alt
		}
		jq.Evidence = &JSONEvidence{GapMs: units.Ms(q.Evidence.Gap), RunnableMs: units.Ms(q.Evidence.Runnable), Placed: q.Evidence.Placed, Host: jsonDelta(q.Evidence.Host)}
		jq.Evidence.BusyMs = units.Ms(q.Evidence.Busy)
		if q.Evidence.DBHost { // the recording's, with or without the probe
			dw := units.Ms(q.Evidence.DBHostWait)
			jq.Evidence.DBHostWaitMs = &dw
		}
		if p := q.Evidence.DBHostPressure; p != nil {
			jq.Evidence.DBHostPressure = &JSONPressureDelta{SomeMs: units.Ms(p.Some), IntervalMs: units.Ms(p.Interval)}
		}
		if q.Evidence.Placed {
			before, after := units.Ms(q.Evidence.BeforeDB), units.Ms(q.Evidence.AfterDB)
			jq.Evidence.BeforeDBMs, jq.Evidence.AfterDBMs = &before, &after
		}
		if q.Evidence.Probe {
			late, tail, head := units.Ms(q.Evidence.ProbeLate), units.Ms(q.Evidence.ProbeTail), units.Ms(q.Evidence.ProbeHead)
			jq.Evidence.ProbeLateMs, jq.Evidence.ProbeTailMs, jq.Evidence.ProbeHeadMs = &late, &tail, &head
			if q.Evidence.FloorStall > 0 {
				fs := units.Ms(q.Evidence.FloorStall)
				jq.Evidence.FloorStallMs = &fs
			}
		}
		j.Queries = append(j.Queries, jq)
	}
	for _, q := range r.Unmatched {
		j.Unmatched = append(j.Unmatched, jsonQuery(r, q))
	}
	for _, w := range r.Warnings {
		j.Warnings = append(j.Warnings, w.Error())
	}
	return j
}

func jsonQuery(r *dbwait.Result, q dbwait.Query) JSONQuery {
	jq := JSONQuery{
		AtMs: units.Ms(q.Start.Sub(r.TraceStart)), Region: q.Region, Goroutine: int64(q.G), Task: uint64(q.Task),
		TraceParent: q.TraceParent.String(), AppMs: units.Ms(q.App), DBMs: units.Ms(q.DB), DiffMs: units.Ms(q.Outside),
		LockWaitMs: units.Ms(q.LockWait), PID: q.PID, SQL: q.SQL,
	}
	if !q.StartWall.IsZero() {
		w := q.StartWall.UTC()
		jq.Wall = &w
	}
	return jq
}

func jsonDelta(d *hostsig.Delta) *JSONDelta {
	if d == nil {
		return nil
	}
	j := &JSONDelta{IntervalMs: units.Ms(d.Interval)}
	f := func(src hostsig.Source, v time.Duration) *float64 {
		if !d.Has(src) {
			return nil
		}
		x := units.Ms(v)
		return &x
	}
	if d.Has(hostsig.SourceThrottle) {
		n := d.Throttled
		j.NrThrottled = &n
	}
	j.ThrottledMs = f(hostsig.SourceThrottle, d.ThrottledTime)
	j.CgroupPSIMs = f(hostsig.SourceCgroupPSI, d.CgroupSome)
	j.SystemPSIMs = f(hostsig.SourceSystemPSI, d.SystemSome)
	j.StealMs = f(hostsig.SourceSteal, d.Steal)
	j.CPUs = d.CPUs
	j.RunQueueWaitMs = f(hostsig.SourceSchedstat, d.Wait)
	j.CPUMs = f(hostsig.SourceProcess, d.CPU())
	for src := range hostsig.NumSources {
		if !d.Has(src) {
			if j.Absent == nil {
				j.Absent = map[string]string{}
			}
			j.Absent[src.String()] = d.Absent[src]
		}
	}
	return j
}

// jsonPressure is c's JSON form; nil for nil.
func jsonPressure(c *dbwait.PressureCoverage) *JSONPressure {
	if c == nil {
		return nil
	}
	j := &JSONPressure{Source: c.Source, Samples: c.Samples, Covered: c.Covered, Statements: c.Statements}
	if c.Samples > 0 {
		j.From, j.To = c.From.UTC().Format(time.RFC3339Nano), c.To.UTC().Format(time.RFC3339Nano)
	}
	return j
}

// jsonDBHost is c's JSON form; nil for nil.
func jsonDBHost(c *dbwait.DBHostCoverage) *JSONDBHost {
	if c == nil {
		return nil
	}
	return &JSONDBHost{From: c.From.UTC().Format(time.RFC3339Nano), To: c.To.UTC().Format(time.RFC3339Nano), Backends: c.Backends, Covered: c.Covered, Statements: c.Statements}
}
