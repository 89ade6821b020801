package pglog

import "time"

// Entry is one jsonlog line. The first group of fields copies the JSON;
// the rest is parsed from Message and Detail.
type Entry struct {
	End             time.Time // "timestamp": when the line was logged; for a duration line, when the phase ended (ms precision)
	PID             int       // backend process ID
	SessionID       string    // "session_id": backend start time and PID, in hex
	LineNum         int64     // "line_num": per-session line number
	Severity        string    // "error_severity": LOG, ERROR, FATAL, ...
	SQLState        string    // "state_code"
	Message         string
	Detail          string
	Statement       string // "statement": the query being run when a non-duration message was logged
	User            string
	Database        string // "dbname"
	RemoteHost      string
	RemotePort      int
	ApplicationName string
	BackendType     string
	QueryID         int64

	Duration    time.Duration // from "duration: N ms"
	HasDuration bool
	Phase       Phase
	Name        string // prepared statement of a parse, bind or execute line; "" = unnamed
	Portal      string // portal of a bind or execute line; "" = unnamed
	Fetch       bool   // "execute fetch from": a suspended portal resumed
	SQL         string // statement text from Message for phase lines, else the Statement field

	Lock        LockEvent     // log_lock_waits report, if any
	LockMode    string        // e.g. "AccessShareLock"
	LockObject  string        // e.g. "relation 16384 of database 5"
	LockWait    time.Duration // time waited so far ("after N ms")
	LockHolders []int         // from Detail: "Process(es) holding the lock: ..."

	bare bool // message is just "duration: N ms" (the statement was logged before, by log_statement)
}

// Phase is the step of statement processing a line reports.
type Phase uint8

// Phases. The simple query protocol logs one "statement:" line; the
// extended protocol logs parse, bind and execute lines.
const (
	PhaseNone      Phase = iota // not a statement line
	PhaseStatement              // "statement: <sql>"
	PhaseParse                  // "parse <name>: <sql>"
	PhaseBind                   // "bind <name>[/<portal>]: <sql>"
	PhaseExecute                // "execute [fetch from ]<name>[/<portal>]: <sql>"
)

var phaseStrings = [...]string{
	PhaseNone:      "none",
	PhaseStatement: "statement",
	PhaseParse:     "parse",
	PhaseBind:      "bind",
	PhaseExecute:   "execute",
}

// String returns the phase's lower-case name.
func (p Phase) String() string {
	if int(p) < len(phaseStrings) {
		return phaseStrings[p]
	}
	return "Phase(?)"
}

// LockEvent is the kind of a log_lock_waits report.
type LockEvent uint8

// Lock events, one per message form of PostgreSQL's ProcSleep.
const (
	LockNone            LockEvent = iota
	LockWaiting                   // "process N still waiting for M on O after T ms"
	LockAcquired                  // "process N acquired M on O after T ms"
	LockDeadlockAvoided           // "process N avoided deadlock for M on O by rearranging queue order after T ms"
	LockDeadlock                  // "process N detected deadlock while waiting for M on O after T ms"
	LockFailed                    // "process N failed to acquire M on O after T ms"
)

var lockEventStrings = [...]string{
	LockNone:            "none",
	LockWaiting:         "waiting",
	LockAcquired:        "acquired",
	LockDeadlockAvoided: "deadlock-avoided",
	LockDeadlock:        "deadlock",
	LockFailed:          "failed",
}

// String returns the event's lower-case name.
func (l LockEvent) String() string {
	if int(l) < len(lockEventStrings) {
		return lockEventStrings[l]
	}
	return "LockEvent(?)"
}
