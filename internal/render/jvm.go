package render

import "encoding/json"

// Reasons a JVM recording's report gives, in JSON "not_measured", for the
// fields it writes as null instead of 0 (docs/json.md).
const (
	NotMeasuredCPU = "JFR records waits and execution samples, not a thread's running and runnable time"
	// NotMeasuredRunnable is the reason when the Java library measured
	// each request's thread CPU: running is that; runnable is not.
	NotMeasuredRunnable = "JFR records no time a thread waited for a CPU; running is the Java library's measured thread CPU (cpuTime)"
	NotMeasuredLatency  = "a recording has no request boundaries: give --requests-from the load's results for latencies"
)

// markJVM marks the parts of a JVM recording's report that the recording
// cannot give, so their JSON fields are null with a reason rather than 0:
// running and runnable always; latencies and shares of the mean when no
// load results gave latencies.
func markJVM(rep *Report) {
	if !rep.Trace.JVM {
		return
	}
	mark := func(q *Requests, terms []Term, c *CPU, cv *Coverage) {
		c.notMeasured = true
		if q.Mean > 0 {
			return
		}
		q.noLatency, cv.noLatency = true, true
		for i := range terms {
			terms[i].noLatency = true
		}
	}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		mark(&g.Requests, g.Terms, &g.CPU, &g.Coverage)
	}
	mark(&rep.Requests, rep.Terms, &rep.CPU, &rep.Coverage)
}

// MarshalJSON writes the latencies as null, with the reason, when the
// input had none (a JVM recording without load results).
func (q Requests) MarshalJSON() ([]byte, error) {
	type plain Requests
	if !q.noLatency {
		return json.Marshal(plain(q))
	}
	return json.Marshal(struct {
		plain
		Mean        *Duration `json:"mean_ms"`
		StdDev      *Duration `json:"stddev_ms"`
		Min         *Duration `json:"min_ms"`
		P50         *Duration `json:"p50_ms"`
		P90         *Duration `json:"p90_ms"`
		P99         *Duration `json:"p99_ms"`
		Max         *Duration `json:"max_ms"`
		NotMeasured string    `json:"not_measured"`
	}{plain: plain(q), NotMeasured: NotMeasuredLatency})
}

// MarshalJSON writes running and runnable time as null, with the reason,
// for a JVM recording.
func (c CPU) MarshalJSON() ([]byte, error) {
	type plain CPU
	if !c.notMeasured {
		return json.Marshal(plain(c))
	}
	if c.runningExact {
		return json.Marshal(struct {
			plain
			Runnable         *Duration `json:"runnable_ms"`
			CriticalRunnable *Duration `json:"critical_runnable_ms"`
			NotMeasured      string    `json:"not_measured"`
		}{plain: plain(c), NotMeasured: NotMeasuredRunnable})
	}
	return json.Marshal(struct {
		plain
		Running          *Duration `json:"running_ms"`
		Runnable         *Duration `json:"runnable_ms"`
		CriticalRunning  *Duration `json:"critical_running_ms"`
		CriticalRunnable *Duration `json:"critical_runnable_ms"`
		NotMeasured      string    `json:"not_measured"`
	}{plain: plain(c), NotMeasured: NotMeasuredCPU})
}

// MarshalJSON writes the shares of the mean as null when there is no mean.
func (t Term) MarshalJSON() ([]byte, error) {
	type plain Term
	if !t.noLatency {
		return json.Marshal(plain(t))
	}
	return json.Marshal(struct {
		plain
		SharePct    *float64 `json:"share_pct"`
		CriticalPct *float64 `json:"critical_pct"`
	}{plain: plain(t)})
}

// MarshalJSON writes the shares of the mean as null when there is no mean.
func (c Coverage) MarshalJSON() ([]byte, error) {
	type plain Coverage
	if !c.noLatency {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		WaitSumPct      *float64 `json:"wait_sum_pct"`
		GoroutineSumPct *float64 `json:"goroutine_sum_pct"`
		CriticalPct     *float64 `json:"critical_pct"`
		NotMeasured     string   `json:"not_measured"`
	}{plain: plain(c), NotMeasured: NotMeasuredLatency})
}
