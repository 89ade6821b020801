package queueing

import (
	"fmt"
	"math"
)

// HoldRisk says that a what-if's throughput is a saturated hold's bound
// and how far that bound moves with the part of the hold that is neither
// CPU nor a recorded wait (docs/method.md §7, "A hold's wait for a core").
type HoldRisk struct {
	Station string  `json:"station"`
	Busy    float64 `json:"utilisation"` // the station's, after
	HoldMs  float64 `json:"hold_ms"`     // its demand after: the hold and its hand-off
	CPUMs   float64 `json:"hold_cpu_ms"`
	SchedMs float64 `json:"hold_sched_ms"` // waiting for a core and the hand-off
	// RPSHigh is the throughput with SchedMs gone, RPSLow with it doubled.
	RPSLow  float64 `json:"rps_low"`
	RPSHigh float64 `json:"rps_high"`
	Text    string  `json:"text"`
}

// riskBusy is the utilisation from which a hold's station bounds the
// throughput: the model's throughput is then its servers over its demand,
// within 5 %.
const riskBusy = 0.95

// riskShare is the share of a hold's demand its wait for a core must
// reach to be said: compare's bar, 5 % of a mean.
const riskShare = 0.05

// holdRisk returns the risk of st, the solved state of after (m changed by
// a what-if), when st's throughput is bounded by a hold the input measured
// the CPU of (a JVM hold's cpuTime) and whose time neither CPU nor a
// recorded wait is at least riskShare of its demand; nil otherwise.
//
// That time is the holder waiting for a core and, for a lock, the lock
// left free at a hand-off until its next holder ran: scheduling, which the
// model keeps as recorded. Measured on a JDK service (Svc, a lock holding
// 1.4 ms of CPU) between 8- and 40-client recordings, the holder's wait
// was 0.3–1.5 times the 8-client one and the section's CPU 0.94–1.08
// times, in both directions, with what else ran (the JIT compiler, other
// processes) and not with the clients (docs/jfr.md). Nothing in one
// recording tells which way they go in the next, so the throughput is
// given a range: the bound with that time gone and with it doubled.
// The hold's bound is the throughput's only where no other station's is
// lower, and with that time gone the throughput rises at most to the
// lowest of the others (the cores', on a host the hold's CPU fills).
func holdRisk(m, after *Model, st State) *HoldRisk {
	var out *HoldRisk
	for k, u := range st.Resources {
		if u.Kind != Pool || u.Util < riskBusy || k >= len(m.Resources) || k >= len(after.Resources) || out != nil && u.Util <= out.Busy {
			continue
		}
		r, a := m.Resources[k], after.Resources[k]
		if r.HoldCPUMs <= 0 || r.DemandMs <= 0 || a.DemandMs <= 0 {
			continue
		}
		sched := r.HoldSchedMs + r.WakeMs
		if sched < riskShare*r.DemandMs || sched >= r.DemandMs {
			continue
		}
		other, by := math.Inf(1), ""
		for j, v := range st.Resources {
			if b := bound(v); j != k && b < other {
				other, by = b, v.Name
			}
		}
		if other < bound(u) {
			continue // another station bounds the throughput
		}
		// a what-if that scales the hold scales its parts alike
		f := a.DemandMs / r.DemandMs
		d, s, c := a.DemandMs, sched*f, r.HoldCPUMs*f
		high, held := st.RPS*d/(d-s), ""
		if high > other {
			high, held = other, fmt.Sprintf(" (%s's bound)", by)
		}
		others := "" // what the others used, where the recording measured it
		if m.OthersGiven > 0 {
			others = fmt.Sprintf(": %.0f %% of the cores in this one", 100*m.OthersGiven)
		}
		h := &HoldRisk{Station: u.Name, Busy: u.Util, HoldMs: round3(d), CPUMs: round3(c), SchedMs: round3(s),
			RPSLow: round3(st.RPS * d / (d + s)), RPSHigh: round3(high)}
		h.Text = fmt.Sprintf("the throughput is %s's bound (%.0f %% busy, %d / %.3g ms), and %.3g ms of that is neither its CPU (%.3g ms) nor a recorded wait: "+
			"its holder waiting for a core, and the hand-off to the next. The model keeps both as recorded; measured, they and the CPU's speed moved between recordings with what else ran on the cores "+
			"(the JIT compiler, other processes%s), not with the clients, so another recording may not repeat them (docs/method.md §7, \"A hold's wait for a core\"): "+
			"with that time gone the bound is %.1f rps%s (%+.0f %%), with it doubled %.1f rps (%+.0f %%)",
			u.Name, 100*u.Util, u.Servers, d, s, c, others, h.RPSHigh, held, pct(h.RPSHigh, st.RPS), h.RPSLow, pct(h.RPSLow, st.RPS))
		out = h
	}
	return out
}

// bound returns the throughput (per second) station u allows at most,
// its servers over its demand; +Inf for a delay.
func bound(u Usage) float64 {
	if u.Kind == Delays || u.Servers <= 0 || u.DemandMs <= 0 {
		return math.Inf(1)
	}
	return float64(u.Servers) * 1000 / u.DemandMs
}
