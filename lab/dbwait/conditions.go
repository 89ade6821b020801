package dbwait

import "time"

// Fault is what the lab does to the service or the database during a
// window.
type Fault uint8

// Faults.
const (
	NoFault    Fault = iota
	LockFault        // another session holds an ACCESS EXCLUSIVE lock on Table for LockHold
	PauseFault       // the same lock, and the service is SIGSTOPped for PauseHold while a lookup waits on it
	// StopFault: Condition.Cycles times, StopEvery apart, a lock on Table
	// until a lookup waits on it, then the service SIGSTOPped for
	// Condition.Pause and the lock released at once, so that the answer
	// arrives while the process is stopped: the lookup's time outside the
	// DB is the pause.
	StopFault
)

// StopEvery is the spacing of a StopFault's pauses, from one SIGSTOP to
// the next, beyond the pause itself.
const StopEvery = 700 * time.Millisecond

// Fault timing, as in the seed: a 1 s lock; a 1.5 s stop that begins while
// a lookup waits on that lock, so the answer arrives while the process is
// stopped.
const (
	FaultAt   = time.Second // into the window
	LockHold  = time.Second
	PauseHold = 1500 * time.Millisecond
)

// Condition is one setting the service is measured in.
type Condition struct {
	Name    string
	Summary string
	Fault   Fault
	// Quota is the CFS quota of the service's cgroup in CPUs; 0 = none.
	Quota float64
	// DBQuota is the CFS quota of the database's cgroup in CPUs, with a
	// backend of the lab's spinning in it for the whole window, so that
	// the lookups' backends wait for the cgroup's quota; 0 = none.
	DBQuota float64
	// CPUWork is the CPU each lookup request computes while its statement
	// is in flight (on HeavyFanout goroutines).
	CPUWork time.Duration
	// Delay is the proxy's delay of every response chunk from the
	// database; 0 = no proxy.
	Delay time.Duration
	// Pause and Cycles: a StopFault's SIGSTOP length and count.
	Pause  time.Duration
	Cycles int
	// MinWindow is the shortest window of the condition, whatever the
	// profile's (0: the profile's): the fault suite's quota conditions slow
	// a few statements a second, and need more of them to be scored.
	MinWindow time.Duration
}

// faultEnd is when, from the window's start, the condition's fault is
// over at the latest.
func (c Condition) faultEnd() time.Duration {
	switch c.Fault {
	case LockFault:
		return FaultAt + LockHold
	case PauseFault:
		return FaultAt + LockHold + PauseHold
	case StopFault:
		return FaultAt + time.Duration(c.Cycles)*(c.Pause+StopEvery)
	}
	return 0
}

// CPU-heavy work of the quota and no-limit conditions: 8 ms of CPU per
// lookup on two goroutines (4 ms each, on both CPUs) while the statement is
// in flight, 40 % of one CPU at a lookup every 20 ms. Under QuotaCPUs (20 ms
// per 100 ms period) the cgroup runs out of quota in the third request of
// each period, while its statement's answer waits for a free P, and stays
// throttled to the end of the period. Without a quota the answer waits at
// most for one 4 ms computation.
const (
	HeavyWork   = 8 * time.Millisecond
	HeavyFanout = 2
	QuotaCPUs   = 0.2
	ProxyDelay  = 30 * time.Millisecond
)

// Conditions run in this order; baseline first, the one the others are
// compared with.
var Conditions = []Condition{
	{Name: "baseline", Summary: "lookups only"},
	{Name: "lock", Summary: "another session holds a table lock for 1 s", Fault: LockFault},
	{Name: "pause", Summary: "SIGSTOP for 1.5 s while a lookup waits on a 1 s table lock", Fault: PauseFault},
	{Name: "quota", Summary: "CFS quota 0.2 CPU per 100 ms, CPU-heavy work", Quota: QuotaCPUs, CPUWork: HeavyWork},
	{Name: "cpu", Summary: "the same CPU-heavy work, no quota (the control)", CPUWork: HeavyWork},
	{Name: "proxy", Summary: "a TCP proxy delays every response by 30 ms", Delay: ProxyDelay},
}
