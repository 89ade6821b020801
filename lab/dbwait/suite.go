package dbwait

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	md "github.com/latscope/latscope/internal/report/markdown"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/lab"
)

func init() {
	lab.Register(lab.Scenario{
		Name:    "dbwait-faults",
		Summary: "dbwait's verdicts per statement against the faults the lab injected: pauses, delays, quota, quota + delay, lock, none (a confusion matrix; --loaded for a busy host)",
		Needs:   []string{"private-postgres", "root"},
		Run:     RunFaults,
	})
}

// FaultConditions are the fault suite's conditions: each fault at more
// than one size, two faults together, and two without a fault.
var FaultConditions = []Condition{
	{Name: "none", Summary: "lookups only"},
	{Name: "cpu", Summary: "CPU-heavy lookups, no quota", CPUWork: HeavyWork},
	{Name: "lock", Summary: "a table lock for 1 s", Fault: LockFault},
	{Name: "pause-150ms", Summary: "12 × SIGSTOP 150 ms while a lookup waits for its answer", Fault: StopFault, Pause: 150 * time.Millisecond, Cycles: PauseCycles},
	{Name: "pause-300ms", Summary: "12 × SIGSTOP 300 ms while a lookup waits for its answer", Fault: StopFault, Pause: 300 * time.Millisecond, Cycles: PauseCycles},
	{Name: "quota", Summary: "CFS quota 0.2 CPU, CPU-heavy lookups", Quota: QuotaCPUs, CPUWork: HeavyWork, MinWindow: quotaWindow},
	{Name: "proxy-15ms", Summary: "every response delayed 15 ms", Delay: 15 * time.Millisecond},
	{Name: "proxy-40ms", Summary: "every response delayed 40 ms", Delay: 40 * time.Millisecond},
	{Name: "db-quota", Summary: "CFS quota 0.2 CPU on the database, one backend spinning in it", DBQuota: QuotaCPUs, MinWindow: quotaWindow},
	{Name: "quota+proxy-30ms", Summary: "CFS quota 0.2 CPU, CPU-heavy lookups, every response delayed 30 ms", Quota: QuotaCPUs, CPUWork: HeavyWork, Delay: 30 * time.Millisecond, MinWindow: quotaWindow},
}

// PauseCycles is how many stops each pause condition makes per run: the
// issue's 150 and 300 ms (issue 34 item 2), 12 of each, which adds about
// 10 s to a run of the suite (windows of 13 and 14 s, were 9 and 8). At that n a run
// can fail a pause condition only when 4 or more of 12 stops are missed
// (the binomial test at the 95 % bar, α = 0.01): it catches a rule that
// is badly wrong, not one right 85 % of the time (docs/dbwait.md).
const PauseCycles = 12

// quotaWindow is the quota conditions' shortest window: under the quota
// the lookups slow down, and a few a second are slowed by it.
const quotaWindow = 8 * time.Second

// Acceptance of the fault suite, per condition.
const (
	MinRight = 0.95 // of the statements a fault affected, the share with the right verdict
	MaxWrong = 0.01 // of those it did not, the share with a wrong outside verdict
)

// RunFaults runs the fault suite and scores every statement against the
// truth the lab recorded.
func RunFaults(ctx context.Context, env *lab.Env) (*lab.Outcome, error) {
	return runScenario(ctx, env, FaultConditions, SharedCPU, faultsOutcome)
}

// Score is one condition's statements against the truth, analysed with
// or without the database host's recording.
type Score struct {
	Condition string `json:"condition"`
	// DBHost: the statements as dbwait judged them with the recording of
	// the database's host (--dbhost); false: the same trace and log
	// without it.
	DBHost bool `json:"dbhost"`
	// Affected statements, and those of them with a right verdict;
	// Unaffected ones, and those with a wrong outside verdict; Excluded:
	// partly affected, scored neither way.
	Affected   int `json:"affected"`
	Right      int `json:"right"`
	Unaffected int `json:"unaffected"`
	Wrong      int `json:"wrong"`
	Excluded   int `json:"excluded"`
	// Edge: unknown for want of a host sample at the trace's edge, not
	// scored.
	Edge int `json:"edge_unknown"`
	// NetworkOrDBCPU: unaffected statements called network with db-cpu
	// as the alternative (no recording of the database host, this host
	// under CPU pressure), scored not wrong because the database's host
	// was in fact busy (hedgeRight); counted in Matrix as network too.
	NetworkOrDBCPU int `json:"network_or_db_cpu"`
	// Matrix counts every scored statement's verdict by its truth
	// ("affected: network", "unaffected").
	Matrix map[string]map[string]int `json:"matrix"`
	// Truth says what counted as affected and as right.
	Truth string `json:"truth"`
}

// truth is what a condition's fault did to one statement.
type truth struct {
	affected bool
	excluded bool
	want     []dbwait.Verdict // right verdicts when affected
	label    string
}

// wrongOutside are the verdicts that would send a user after a cause that
// was not there, for a statement no fault affected: runnable (the CPU was
// busy), db-cpu (the database's backend waited on its run queue, as the
// kernel counted it, on a host the lab shares with the service and, when
// loaded, the burners) and unknown (no answer) are not wrong.
var wrongOutside = []dbwait.Verdict{dbwait.Throttled, dbwait.Steal, dbwait.Paused, dbwait.Network, dbwait.Mixed}

// truthOf decides, from the condition and the fault spans the lab
// recorded (on the trace clock), what happened to statement q.
//
// Under the quota a statement's answer may also wait for the lookups' own
// CPU work or, on a busy host, for other programs: the lab cannot tell
// which of those CPU causes slowed it, so any CPU verdict (throttled,
// runnable, or db-cpu: the database runs on the lab's host and its
// backends wait for the same two CPUs) is right there; the confusion
// matrix shows the split.
func truthOf(c Condition, rr *RunResult, q dbwait.Query, threshold time.Duration) (truth, string) {
	ms := func(t tracein.Time) float64 { return units.Ms(t.Sub(rr.res.TraceStart)) }
	from, to := ms(q.Start), ms(q.End)
	overlap := func(prefix string) (best float64) {
		for _, f := range rr.Faults {
			if strings.HasPrefix(f.What, prefix) {
				best = max(best, min(to, f.ToMs)-max(from, f.FromMs))
			}
		}
		return best
	}
	switch {
	case c.Fault == LockFault:
		if q.DB >= LockHold/2 {
			return truth{affected: true, want: []dbwait.Verdict{dbwait.Inside}, label: "inside"}, "waited ≥ 0.5 s on the lock: inside"
		}
		return truth{label: "unaffected"}, "waited ≥ 0.5 s on the lock: inside; the rest unaffected"
	case c.Fault == StopFault:
		rule := fmt.Sprintf("span overlaps a SIGSTOP by ≥ %v: paused; by less: excluded; the rest unaffected", c.Pause/2)
		switch o := overlap("SIGSTOP"); {
		case o >= units.Ms(c.Pause/2):
			return truth{affected: true, want: []dbwait.Verdict{dbwait.Paused}, label: "paused"}, rule
		case o > 0:
			return truth{excluded: true}, rule
		}
		return truth{label: "unaffected"}, rule
	case c.Delay > 0:
		net, ok := rr.proxy.network(q.TraceParent, q.Start, q.End)
		return delayTruth(c, q.Outside, net, ok, threshold)
	case c.DBQuota > 0:
		return dbQuotaTruth(rr, q, threshold)
	case c.Quota > 0:
		rule := fmt.Sprintf("difference over %v: a CPU cause, throttled, runnable or db-cpu (the lookups' own CPU work, other programs, on the host the database shares); the rest excluded (under the quota, not slowed)", threshold)
		want := []dbwait.Verdict{dbwait.Throttled, dbwait.Runnable, dbwait.DBCPU}
		if q.Outside > threshold {
			return truth{affected: true, want: want, label: "throttled"}, rule
		}
		return truth{excluded: true}, rule
	}
	return truth{label: "unaffected"}, "no fault: every statement unaffected"
}

// delayTruth is the truth for a statement whose answer the proxy delayed:
// net, the network's share of its difference, is the proxy's own
// measurement (its log's holds of the statement's chunks within the span,
// proxyHolds.network), not the delay the lab configured, so a proxy whose
// timer fired late on a busy host counts that lateness as the network's,
// as a loaded network hop's would be; ok is false when the log has no
// chunk of the statement (then it is excluded). A difference within net
// and the threshold is the network's. Past that, whatever else took the
// rest (the quota, the host's CPU) is a cause of its own, and the right
// verdict follows the shares (shareTruth).
func delayTruth(c Condition, outside, net time.Duration, ok bool, threshold time.Duration) (truth, string) {
	rule := fmt.Sprintf("the network's share n: the proxy's own log, its holds of the statement's chunks within the span; difference under n + %v: network; over it: network (n ≥ ½), mixed (n and 1−n ≥ ⅓), a CPU cause (1−n ≥ ½); no chunk in the log: excluded", threshold)
	if !ok {
		return truth{excluded: true}, rule
	}
	net = min(net, max(outside, 0))
	if outside < net+threshold {
		return truth{affected: true, want: []dbwait.Verdict{dbwait.Network}, label: "network"}, rule
	}
	cpu := []dbwait.Verdict{dbwait.Runnable, dbwait.DBCPU}
	label := "network + CPU"
	if c.Quota > 0 {
		cpu, label = append(cpu, dbwait.Throttled), "network + quota"
	}
	return truth{affected: true, want: shareTruth(outside, net, []dbwait.Verdict{dbwait.Network}, cpu), label: label}, rule
}

// dbQuotaTruth is the truth for a statement of the db-quota condition: of
// a difference over the threshold, the database host's share is its
// backend's run-queue wait outside the database's timer, as the database
// host's recording places it (dbHostShare); the rest is this host's CPU
// (the service's process waiting to send the query or take the answer,
// on the loaded host) and the loopback. The right verdict follows the
// shares (shareTruth): db-cpu, mixed, runnable. A statement the recording
// cannot place is excluded. (Until issue 34's third round the truth was
// db-cpu for every difference over the threshold: on a loaded host the
// service's own stalls took most of a few statements' differences.)
func dbQuotaTruth(rr *RunResult, q dbwait.Query, threshold time.Duration) (truth, string) {
	rule := fmt.Sprintf("difference over %v, by the database host's share b (its recording's run-queue wait of the lookup's backend outside the database's timer, at most the difference): db-cpu (b ≥ ½), mixed (b and 1−b ≥ ⅓), runnable (1−b ≥ ½); not placed by the recording, or not over %[1]v: excluded", threshold)
	if q.Outside <= threshold {
		return truth{excluded: true}, rule
	}
	b, ok := dbHostShare(rr.dbh, q)
	if !ok {
		return truth{excluded: true}, rule
	}
	want := shareTruth(q.Outside, b, []dbwait.Verdict{dbwait.DBCPU}, []dbwait.Verdict{dbwait.Runnable})
	label := "db-cpu"
	if !slices.Equal(want, []dbwait.Verdict{dbwait.DBCPU}) {
		label = "db-cpu + CPU"
	}
	return truth{affected: true, want: want, label: label}, rule
}

// right tells whether q's verdict is one of t's right ones. Without the
// database host's recording dbwait cannot decide db-cpu, and says so with
// "network or db-cpu" (a network verdict with db-cpu as the alternative):
// where db-cpu is right, that honest hedge is right too; a plain network
// is not.
func right(t truth, q dbwait.Query, withDBHost bool) bool {
	if slices.Contains(t.want, q.Verdict) {
		return true
	}
	return !withDBHost && slices.Contains(t.want, dbwait.DBCPU) && q.Verdict == dbwait.Network && q.Alternative == dbwait.DBCPU
}

// queriesOf is a run's statements as judged with the database host's
// recording, or without it.
func (rr *RunResult) queriesOf(withDBHost bool) []dbwait.Query {
	if withDBHost || rr.resNoDBHost == nil {
		return rr.res.Queries
	}
	return rr.resNoDBHost.Queries
}

// score scores a condition's statements, judged with the database host's
// recording or without it. The truth is the same either way.
func score(c *ConditionResult, withDBHost, dbBusy bool) Score {
	s := Score{Condition: c.Name, DBHost: withDBHost, Matrix: map[string]map[string]int{}}
	for _, rr := range c.Runs {
		th := rr.res.Options.Threshold
		for _, q := range rr.queriesOf(withDBHost) {
			t, rule := truthOf(c.cond, rr, q, th)
			s.Truth = rule
			if q.Verdict == dbwait.Unknown && q.Evidence.Host == nil {
				// at the trace's edge no host sample covers it: unknown is
				// the data's limit there (the lab's other checks leave these
				// out too)
				s.Edge++
				continue
			}
			if t.excluded {
				s.Excluded++
				continue
			}
			key := "unaffected"
			if t.affected {
				key = "affected: " + t.label
				s.Affected++
				if right(t, q, withDBHost) {
					s.Right++
				}
			} else {
				s.Unaffected++
				switch {
				case hedgeRight(q, dbBusy):
					s.NetworkOrDBCPU++
				case slices.Contains(wrongOutside, q.Verdict):
					s.Wrong++
				}
			}
			if s.Matrix[key] == nil {
				s.Matrix[key] = map[string]int{}
			}
			s.Matrix[key][q.Verdict.String()]++
			if q.Alternative == dbwait.DBCPU {
				s.Matrix[key][orDBCPU]++
			}
		}
	}
	return s
}

// check turns a score into the condition's acceptance check.
func (s Score) check() lab.Check {
	ck := lab.Check{Name: s.Condition + ", " + s.mode() + ": verdicts against the truth",
		Want: fmt.Sprintf("≥ %.0f %% of affected statements right, ≤ %.0f %% of unaffected ones with a wrong outside verdict (beyond sampling error: one-sided binomial test, α = %g)", 100*MinRight, 100*MaxWrong, Alpha)}
	ok := true
	var got []string
	if s.Affected > 0 {
		line, pass := rate(s.Affected-s.Right, s.Affected, 1-MinRight)
		got, ok = append(got, fmt.Sprintf("%d of %d affected right (%.1f %%%s)", s.Right, s.Affected, pct(s.Right, s.Affected), line)), pass
	}
	if s.Unaffected > 0 {
		line, pass := rate(s.Wrong, s.Unaffected, MaxWrong)
		got, ok = append(got, fmt.Sprintf("%d of %d unaffected wrong (%.1f %%%s)", s.Wrong, s.Unaffected, pct(s.Wrong, s.Unaffected), line)), ok && pass
	}
	if s.Affected+s.Unaffected == 0 {
		got, ok = append(got, "no statement scored"), false
	}
	ck.Got, ck.OK = strings.Join(got, ", "), ok
	return ck
}

// mode names how the statements were judged.
func (s Score) mode() string {
	if s.DBHost {
		return "with --dbhost"
	}
	return "without --dbhost"
}

// Alpha is the significance of the suite's checks. A bar of 95 % right is
// a rate, and a run scores a sample of it — 3 to 250 statements per
// condition — so a condition fails when its misses are more than a true
// miss rate at the bar would give with probability Alpha (a one-sided
// exact binomial test), not whenever the sample's rate falls under it.
const Alpha = 0.01

// rate tests misses out of n against a true miss rate of bar: it passes
// when misses ≤ bar·n, or when so many misses would come at rate bar with
// probability Alpha or more (then it says so, with that probability).
func rate(misses, n int, bar float64) (string, bool) {
	if float64(misses) <= bar*float64(n) {
		return "", true
	}
	p := binomTail(n, misses, bar)
	if p >= Alpha {
		return fmt.Sprintf("; past the bar by sampling error: %d or more of %d at %g %% has p = %.2f", misses, n, 100*bar, p), true
	}
	return fmt.Sprintf("; p = %.3g at %g %%", p, 100*bar), false
}

// binomTail is P(X ≥ k) for X ~ Binomial(n, p).
func binomTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for i := k; i <= n; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(ln - li - lr + float64(i)*lp + float64(n-i)*lq)
	}
	return min(sum, 1)
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(b) }

// FaultsResult is the fault suite's JSON.
type FaultsResult struct {
	Profile    string             `json:"profile"`
	Burners    int                `json:"burners"`
	Scores     []Score            `json:"scores"`
	Conditions []*ConditionResult `json:"conditions"`
	Checks     []lab.Check        `json:"checks"`
}

// faultsOutcome scores every condition and writes the confusion matrix.
func faultsOutcome(env *lab.Env, results []*ConditionResult) (*lab.Outcome, error) {
	res := &FaultsResult{Profile: env.Profile.Name, Burners: env.Burners, Conditions: results}
	for _, withDBHost := range []bool{true, false} {
		for _, c := range results {
			s := score(c, withDBHost, env.Burners > 0)
			res.Scores = append(res.Scores, s)
			res.Checks = append(res.Checks, s.check())
		}
	}
	html, err := page(env, results, res.Checks)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	return &lab.Outcome{Title: "dbwait's verdicts against injected faults", Markdown: faultsMarkdown(env, res) + "\n" + markdown(env, results),
		HTML: html, JSON: res, Checks: res.Checks}, nil
}

// faultsMarkdown is the confusion matrix: per condition and truth, the
// statements by verdict.
func faultsMarkdown(env *lab.Env, res *FaultsResult) string {
	var b strings.Builder
	host := "a quiet host"
	if env.Burners > 0 {
		host = fmt.Sprintf("a loaded host (%d CPU burners, one per core)", env.Burners)
	}
	fmt.Fprintf(&b, "Every statement of every condition scored against the faults the lab injected, on %s. "+
		"Every run's trace and log are judged twice: with the database host's recording (--dbhost) and without it. "+
		"Truth never comes from dbwait's verdicts: the lock's waiter is the statement the database's own log timed at half the hold or more; "+
		"a statement's difference is its span on the service's trace clock less the database's own logged duration; "+
		"the stops are the lab's record of when it sent SIGSTOP and SIGCONT; the proxy's share is its own log's hold of the statement's chunks "+
		"(latscope-lab proxy --log, on the trace's clock, joined by traceparent); the database host's share under its quota is its recording's run-queue wait of the statement's backend "+
		"outside the database's timer; the quotas are the lab's configuration.\n\n", host)
	head := []string{"condition", "judged", "truth", "statements"}
	for v := range dbwait.NumVerdicts {
		head = append(head, v.String())
	}
	matrix := md.NewTable(append(head, "of network: "+orDBCPU)...)
	for _, s := range res.Scores {
		keys := make([]string, 0, len(s.Matrix))
		for k := range s.Matrix {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			row, n := s.Matrix[k], 0
			for v, c := range row {
				if v != orDBCPU { // counted under network too
					n += c
				}
			}
			cells := []string{s.Condition, s.mode(), k, strconv.Itoa(n)}
			for v := range dbwait.NumVerdicts {
				cells = append(cells, strconv.Itoa(row[v.String()]))
			}
			matrix.Row(append(cells, strconv.Itoa(row[orDBCPU]))...)
		}
	}
	b.WriteString(matrix.String())
	rules := md.NewTable("condition", "judged", "truth rule", "affected right", "unaffected wrong", "unaffected network or db-cpu, the host busy (not wrong)", "excluded (partly affected)", "unknown at the trace's edge")
	for _, s := range res.Scores {
		rules.Row(s.Condition, s.mode(), s.Truth, ratio(s.Right, s.Affected), ratio(s.Wrong, s.Unaffected), ratio(s.NetworkOrDBCPU, s.Unaffected), strconv.Itoa(s.Excluded), strconv.Itoa(s.Edge))
	}
	b.WriteString("\n" + rules.String())
	return b.String()
}

// ratio is "a/b (p %)", or "—" when b is 0.
func ratio(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d (%.1f %%)", a, b, pct(a, b))
}
