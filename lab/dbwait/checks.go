package dbwait

import (
	"fmt"
	"math"
	"time"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
	"github.com/latscope/latscope/lab"
)

// ProxyTolerance is how far the proxy condition's difference p50 may be
// from baseline + ProxyDelay. The proxy holds every response chunk for
// exactly ProxyDelay by a timer in the lab's own process, which is neither
// paused nor throttled; the difference subtracts the database's own time,
// so nothing on the server side moves it. What is left is timer and
// scheduling latency in the proxy and in the service (under 1 ms on an idle
// loopback, a few ms on a busy 2-core machine) and at most one extra chunk
// of a split response (also ProxyDelay late, not 2×: a delay line). 10 ms
// tells 30 ms from 0 and from 60 ms (both directions delayed, or delays
// adding up) and leaves room for a busy machine.
const ProxyTolerance = 10 * time.Millisecond

// checks are the acceptance checks of issue 5.
func checks(results []*ConditionResult) []lab.Check {
	by := map[string]*ConditionResult{}
	for _, c := range results {
		by[c.Name] = c
	}
	var out []lab.Check
	for _, f := range []func(map[string]*ConditionResult) lab.Check{checkLock, checkPause, checkQuota, checkCPU, checkProxy} {
		out = append(out, f(by))
	}
	return out
}

// checkLock: the statement that waited on the lock has both timings grown
// together, so it is inside the DB.
func checkLock(by map[string]*ConditionResult) lab.Check {
	ck := lab.Check{Name: "lock: the wait is inside the DB", Want: "every statement that waited ≥ 0.5 s on the lock: verdict inside"}
	var n, inside int
	var dbMax, diffMax time.Duration
	for _, q := range by["lock"].queries() {
		if q.DB < LockHold/2 {
			continue
		}
		n++
		dbMax, diffMax = max(dbMax, q.DB), max(diffMax, q.Outside)
		if q.Verdict == dbwait.Inside {
			inside++
		}
	}
	ck.Got = fmt.Sprintf("%d of %d inside (DB up to %s ms, difference up to %s ms)", inside, n, dbwaitreport.Ms(dbMax), dbwaitreport.Ms(diffMax))
	ck.OK = n > 0 && inside == n
	return ck
}

// checkPause: the statement whose answer came while the process was
// stopped has time outside the DB, classified paused.
func checkPause(by map[string]*ConditionResult) lab.Check {
	ck := lab.Check{Name: "pause: the time outside the DB is a paused process", Want: "every statement with a difference ≥ 0.2 s: verdict paused"}
	var n, paused int
	var diffMax, gapMin time.Duration
	for _, q := range by["pause"].queries() {
		if q.Outside < 200*time.Millisecond {
			continue
		}
		n++
		diffMax = max(diffMax, q.Outside)
		if gapMin == 0 || q.Evidence.Gap < gapMin {
			gapMin = q.Evidence.Gap
		}
		if q.Verdict == dbwait.Paused {
			paused++
		}
	}
	ck.Got = fmt.Sprintf("%d of %d paused (difference up to %s ms, no trace events for ≥ %s ms)", paused, n, dbwaitreport.Ms(diffMax), dbwaitreport.Ms(gapMin))
	ck.OK = n > 0 && paused == n
	return ck
}

// checkQuota: the quota throttles (nr_throttled > 0, cgroup PSI above the
// baseline), and the statements outside the DB are classified throttled.
func checkQuota(by map[string]*ConditionResult) lab.Check {
	q, base := by["quota"], by["baseline"]
	ck := lab.Check{Name: "quota: outside time is CFS throttling", Want: "nr_throttled > 0, cgroup PSI above baseline, statements over 10 ms (with host samples) mostly (≥ 80 %) throttled"}
	over, thr := overVerdicts(q, dbwait.Throttled)
	ck.Got = fmt.Sprintf("nr_throttled %g, cgroup PSI %g ms vs baseline %g ms, %d of %d over 10 ms throttled", q.NrThrottled, q.CgroupPSIMs, base.CgroupPSIMs, thr, over)
	ck.OK = q.NrThrottled > 0 && q.CgroupPSIMs > base.CgroupPSIMs && over > 0 && float64(thr) >= 0.8*float64(over)
	return ck
}

// checkCPU: CPU-heavy work without a quota is never throttling.
func checkCPU(by map[string]*ConditionResult) lab.Check {
	c := by["cpu"]
	ck := lab.Check{Name: "cpu without a limit: not throttled", Want: "nr_throttled 0 and no statement classified throttled"}
	over, thr := overVerdicts(c, dbwait.Throttled)
	ck.Got = fmt.Sprintf("nr_throttled %g, %d of %d statements over 10 ms classified throttled", c.NrThrottled, thr, over)
	ck.OK = c.NrThrottled == 0 && thr == 0
	return ck
}

// checkProxy: the proxy's delay is time outside the DB, network, of about
// the delay.
func checkProxy(by map[string]*ConditionResult) lab.Check {
	p, base := by["proxy"], by["baseline"]
	ck := lab.Check{Name: "proxy: outside time is network, +30 ms",
		Want: fmt.Sprintf("difference p50 − baseline within %v ± %v, nr_throttled 0, statements over 10 ms (with host samples) mostly (≥ 90 %%) network", ProxyDelay, ProxyTolerance)}
	over, net := overVerdicts(p, dbwait.Network)
	added := p.DiffP50Ms - base.DiffP50Ms
	ck.Got = fmt.Sprintf("difference p50 +%.1f ms over baseline, nr_throttled %g, %d of %d over 10 ms network", added, p.NrThrottled, net, over)
	ck.OK = math.Abs(added-units.Ms(ProxyDelay)) <= units.Ms(ProxyTolerance) && p.NrThrottled == 0 && over > 0 && float64(net) >= 0.9*float64(over)
	return ck
}

// overVerdicts counts a condition's statements over the threshold that
// host samples cover, and those of them with verdict v. Statements in the
// first or last sampling interval of a trace have no covering samples
// (verdict unknown for lack of data) and are left out.
func overVerdicts(c *ConditionResult, v dbwait.Verdict) (over, withV int) {
	for _, q := range c.queries() {
		if q.Verdict == dbwait.Inside || q.Evidence.Host == nil {
			continue
		}
		over++
		if q.Verdict == v {
			withV++
		}
	}
	return over, withV
}

// orDBCPU is the confusion matrix's column of network verdicts with
// db-cpu as their alternative.
const orDBCPU = "network or db-cpu"

// hedgeRight tells whether an unaffected statement's "network or db-cpu"
// (a network verdict with db-cpu as its alternative: no recording of the
// database host, this host under CPU pressure) is not wrong: only when
// the database's host was in fact busy, by the lab's own record — it ran
// a CPU burner per core on the host the database shares (dbBusy), not
// what dbwait read. On a host the lab did not load it stays wrong, even
// if other programs made it busy: the lab cannot vouch for those.
func hedgeRight(q dbwait.Query, dbBusy bool) bool {
	return dbBusy && q.Verdict == dbwait.Network && q.Alternative == dbwait.DBCPU
}
