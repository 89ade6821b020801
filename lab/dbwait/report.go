package dbwait

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	md "github.com/latscope/latscope/internal/report/markdown"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
	"github.com/latscope/latscope/lab"
)

// Result is the scenario's JSON.
type Result struct {
	Profile    string             `json:"profile"`
	Conditions []*ConditionResult `json:"conditions"`
	Checks     []lab.Check        `json:"checks"`
}

// ConditionResult is one condition over its runs: counts and host deltas
// are means per run, medians are over the statements of all runs, verdicts
// are summed.
type ConditionResult struct {
	Name        string         `json:"name"`
	Summary     string         `json:"summary"`
	Runs        []*RunResult   `json:"runs"`
	Queries     float64        `json:"statements"`
	Over        float64        `json:"over_threshold"`
	DBP50Ms     float64        `json:"db_p50_ms"`
	DiffP50Ms   float64        `json:"diff_p50_ms"`
	NrThrottled float64        `json:"nr_throttled"`
	CgroupPSIMs float64        `json:"cgroup_psi_some_ms"`
	PSIMs       float64        `json:"psi_some_ms"`
	StealMs     float64        `json:"steal_ms"`
	CPUPct      float64        `json:"cpu_pct"`
	Verdicts    map[string]int `json:"verdicts"`
	cond        Condition
}

// RunResult is one window of one condition.
type RunResult struct {
	Run    string `json:"run"`
	Trace  string `json:"trace"`
	PGLog  string `json:"postgresql_log"`
	DBHost string `json:"dbhost"`
	// ProxyLog is the delaying proxy's own log of the run (latscope-lab proxy
	// --log), when the condition had the proxy.
	ProxyLog    string            `json:"proxy_log,omitempty"`
	WindowMs    float64           `json:"window_ms"`
	CPUMs       float64           `json:"process_cpu_ms"`
	PausedMs    float64           `json:"paused_ms,omitempty"`
	Queries     int               `json:"statements"`
	Over        int               `json:"over_threshold"`
	DBP50Ms     float64           `json:"db_p50_ms"`
	DiffP50Ms   float64           `json:"diff_p50_ms"`
	NrThrottled uint64            `json:"nr_throttled"`
	ThrottledMs float64           `json:"throttled_ms"`
	CgroupPSIMs float64           `json:"cgroup_psi_some_ms"`
	PSIMs       float64           `json:"psi_some_ms"`
	StealMs     float64           `json:"steal_ms"`
	HostAbsent  map[string]string `json:"host_absent,omitempty"`
	Verdicts    map[string]int    `json:"verdicts"`
	// VerdictsNoDBHost are the verdicts of the same trace and log analysed
	// without the database host's recording.
	VerdictsNoDBHost map[string]int `json:"verdicts_without_dbhost,omitempty"`
	Outside          []OutsideQuery `json:"outside"`
	Faults           []FaultSpan    `json:"faults,omitempty"`
	Warnings         []string       `json:"warnings,omitempty"`
	res              *dbwait.Result
	resNoDBHost      *dbwait.Result   // the same, without the database host's recording
	samples          []hostsig.Sample // the trace's host samples, for the timeline
	proxy            proxyHolds       // the proxy's log: its holds by traceparent (nil without the proxy)
	dbh              *dbhost.Waits    // the database host's recording
	trace            string
}

// OutsideQuery is a statement over the threshold.
type OutsideQuery struct {
	AtMs       float64 `json:"at_ms"`
	AppMs      float64 `json:"app_ms"`
	DBMs       float64 `json:"db_ms"`
	DiffMs     float64 `json:"diff_ms"`
	LockWaitMs float64 `json:"lock_wait_ms"`
	Verdict    string  `json:"verdict"`
	Confidence string  `json:"confidence,omitempty"`
	Rule       string  `json:"rule"`
	Evidence   string  `json:"evidence"`
}

// fill takes the run's numbers from its dbwait result and keeps the
// trace's host samples for the timeline. The fault spans are placed
// before (placeFaults), or kept as placed.
func (rr *RunResult) fill(res *dbwait.Result, samples []hostsig.Sample) {
	rr.res, rr.samples = res, samples
	s := res.Summary
	rr.Queries, rr.Over, rr.DBP50Ms, rr.DiffP50Ms = s.Matched, s.Over, units.Ms(s.DBP50), units.Ms(s.OutsideP50)
	rr.Verdicts = verdictCounts(s)
	if rr.WindowMs > 0 {
		rr.WindowMs = units.Round3(rr.WindowMs)
	}
	if d := res.Host.Delta; d != nil {
		rr.NrThrottled, rr.ThrottledMs = d.Throttled, units.Ms(d.ThrottledTime)
		rr.CgroupPSIMs, rr.PSIMs, rr.StealMs = units.Ms(d.CgroupSome), units.Ms(d.SystemSome), units.Ms(d.Steal)
		for src := range hostsig.NumSources {
			if !d.Has(src) {
				if rr.HostAbsent == nil {
					rr.HostAbsent = map[string]string{}
				}
				rr.HostAbsent[src.String()] = d.Absent[src]
			}
		}
	}
	for _, q := range res.Queries {
		if q.Verdict == dbwait.Inside {
			continue
		}
		rr.Outside = append(rr.Outside, OutsideQuery{AtMs: units.Ms(q.Start.Sub(res.TraceStart)), AppMs: units.Ms(q.App), DBMs: units.Ms(q.DB),
			DiffMs: units.Ms(q.Outside), LockWaitMs: units.Ms(q.LockWait), Verdict: q.Verdict.String(), Confidence: q.Confidence.String(), Rule: q.Rule, Evidence: dbwaitreport.Evidence(q.Evidence)})
	}
	for _, w := range res.Warnings {
		rr.Warnings = append(rr.Warnings, w.Error())
	}
}

// verdictCounts counts the verdicts of statements over the threshold.
func verdictCounts(s dbwait.Summary) map[string]int {
	m := map[string]int{}
	for v, vs := range s.ByVerdict {
		if vd := dbwait.Verdict(v); vd != dbwait.Inside && vs.Count > 0 {
			m[vd.String()] = vs.Count
		}
	}
	return m
}

// aggregate computes the condition's means and pooled medians.
func (c *ConditionResult) aggregate() {
	c.Verdicts = map[string]int{}
	var db, diff []time.Duration
	n := float64(len(c.Runs))
	for _, r := range c.Runs {
		c.Queries += float64(r.Queries) / n
		c.Over += float64(r.Over) / n
		c.NrThrottled += float64(r.NrThrottled) / n
		c.CgroupPSIMs += r.CgroupPSIMs / n
		c.PSIMs += r.PSIMs / n
		c.StealMs += r.StealMs / n
		if r.WindowMs > 0 {
			c.CPUPct += 100 * r.CPUMs / r.WindowMs / n
		}
		for k, v := range r.Verdicts {
			c.Verdicts[k] += v
		}
		for _, q := range r.res.Queries {
			db, diff = append(db, q.DB), append(diff, q.Outside)
		}
	}
	c.DBP50Ms, c.DiffP50Ms = units.Ms(dbwait.Quantile(db, 0.5)), units.Ms(dbwait.Quantile(diff, 0.5))
	c.Queries, c.Over, c.NrThrottled = units.Round3(c.Queries), units.Round3(c.Over), units.Round3(c.NrThrottled)
	c.CgroupPSIMs, c.PSIMs, c.StealMs, c.CPUPct = units.Round3(c.CgroupPSIMs), units.Round3(c.PSIMs), units.Round3(c.StealMs), units.Round3(c.CPUPct)
}

// queries returns the statements of every run of the condition.
func (c *ConditionResult) queries() []dbwait.Query {
	var out []dbwait.Query
	for _, r := range c.Runs {
		out = append(out, r.res.Queries...)
	}
	return out
}

// outcome builds the report (Markdown and HTML), the JSON and the checks.
func outcome(env *lab.Env, results []*ConditionResult) (*lab.Outcome, error) {
	res := &Result{Profile: env.Profile.Name, Conditions: results}
	res.Checks = checks(results)
	html, err := page(env, results, res.Checks)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	return &lab.Outcome{Title: "Was it the database?", Markdown: markdown(env, results), HTML: html, JSON: res, Checks: res.Checks}, nil
}

func markdown(env *lab.Env, results []*ConditionResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A lookup by primary key every 20 ms, each joined by traceparent with PostgreSQL's own duration; "+
		"difference = app − DB, over 10 ms = outside the DB, classified with host samples taken every 100 ms inside the service "+
		"(`latscope dbwait`, [dbwait.md](../docs/dbwait.md)). %d run(s) per condition, %v windows (4 s at least with a fault). "+
		"Counts and host deltas are means per run; p50s are over all runs' statements; verdicts are summed over runs and count statements over 10 ms.\n\n",
		env.Profile.Runs, env.Profile.Window)
	conds := md.NewTable("condition", "what", "statements", "diff > 10 ms", "DB p50 ms", "diff p50 ms", "nr_throttled", "cgroup PSI some Δ ms", "PSI some Δ ms (machine)", "steal Δ ms", "CPU %", "verdicts")
	for _, c := range results {
		conds.Row(c.Name, c.Summary, fmt.Sprintf("%g", c.Queries), fmt.Sprintf("%g", c.Over), fmt.Sprintf("%.3f", c.DBP50Ms), fmt.Sprintf("%.3f", c.DiffP50Ms),
			fmt.Sprintf("%g", c.NrThrottled), fmt.Sprintf("%g", c.CgroupPSIMs), fmt.Sprintf("%g", c.PSIMs), fmt.Sprintf("%g", c.StealMs), fmt.Sprintf("%g", c.CPUPct), verdictText(c.Verdicts))
	}
	b.WriteString(conds.String())
	slow := md.NewTable("condition", "run", "at ms", "app ms", "DB ms", "diff ms", "verdict", "evidence")
	for _, c := range results {
		for _, row := range slowest(c, 3) {
			slow.Row(c.Name, row.run, fmt.Sprintf("%.0f", row.AtMs), fmt.Sprintf("%.1f", row.AppMs), fmt.Sprintf("%.2f", row.DBMs), fmt.Sprintf("%.1f", row.DiffMs), row.Verdict, row.Evidence)
		}
	}
	b.WriteString("\n### Slowest statements outside the DB\n\n" + slow.String())
	fmt.Fprintf(&b, "\nEvery run's trace and its part of the server log are in `%s`; re-derive a run with `latscope dbwait --pglog %s %s`.\n",
		env.Out, filepath.Join(env.Out, results[0].Runs[0].Trace), filepath.Join(env.Out, results[0].Runs[0].PGLog))
	b.WriteString("\nSteal cannot be produced on demand on this machine: the VM's steal is an uncontrolled trickle of 10 ms ticks (the steal column), " +
		"which by itself makes no statement \"steal\" (that takes steal per CPU of half the difference and an event-free stretch in the trace as long); " +
		"the steal rule is tested on recorded samples with steal added (dbwait's TestStealOnRecordedSamples).\n")
	return b.String()
}

func verdictText(m map[string]int) string {
	if len(m) == 0 {
		return "—"
	}
	var parts []string
	for v := range dbwait.NumVerdicts {
		if n := m[v.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, n))
		}
	}
	return strings.Join(parts, ", ")
}

type runRow struct {
	run string
	OutsideQuery
}

// slowest returns the n statements with the largest difference.
func slowest(c *ConditionResult, n int) []runRow {
	var rows []runRow
	for _, r := range c.Runs {
		for _, q := range r.Outside {
			rows = append(rows, runRow{r.Run, q})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].DiffMs > rows[j].DiffMs })
	return rows[:min(n, len(rows))]
}
