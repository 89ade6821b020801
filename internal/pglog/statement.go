package pglog

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// Statement is one statement's server time, assembled from its log lines.
type Statement struct {
	Start       time.Time     // End − Duration
	End         time.Time     // timestamp of the last phase line
	PID         int           // backend process ID
	SessionID   string        // backend session
	Duration    time.Duration // parse+bind+execute, or the simple-protocol statement; includes lock waits
	LockWait    time.Duration // longest log_lock_waits report for this statement (0 if none or under deadlock_timeout)
	Blocker     int           // first PID holding the lock waited for, 0 if unknown
	SQL         string
	Name        string      // prepared statement name; "" for simple or unnamed statements
	TraceParent TraceParent // from a sqlcommenter comment in SQL; zero if none
	Phases      int         // duration lines summed: 1 for simple, up to 3 for parse/bind/execute
	Error       string      // message of the ERROR that ended the statement after some phases, if any
}

// String is a one-line dump, used in golden files.
func (s Statement) String() string {
	tp := "-"
	if s.TraceParent.IsValid() {
		tp = s.TraceParent.String()
	}
	str := fmt.Sprintf("%s pid=%d dur=%v phases=%d lock=%v blocker=%d tp=%s sql=%q",
		s.Start.UTC().Format("15:04:05.000000"), s.PID, s.Duration, s.Phases, s.LockWait, s.Blocker, tp, s.SQL)
	if s.Error != "" {
		str += fmt.Sprintf(" error=%q", s.Error)
	}
	return str
}

// Statements reads r to the end and calls fn for each statement, in the
// order statements end. It returns the first error from r (a *LineError
// unless r is Lenient) after passing on the statements seen before it.
func Statements(r *Reader, fn func(Statement)) error {
	a := NewAggregator(fn)
	for {
		e, err := r.Next()
		if err == io.EOF {
			a.Flush()
			return nil
		}
		if err != nil {
			a.Flush()
			return err
		}
		a.Add(e)
	}
}

// Aggregator assembles Statements from Entries, one backend at a time: the
// extended protocol's parse, bind and execute lines of one backend are
// summed (the statement ends at execute), a simple "statement:" line is a
// statement on its own, and lock-wait reports are attached to the statement
// they name. State is kept per PID only until its statement ends.
type Aggregator struct {
	emit     func(Statement)
	backends map[int]*backend
}

// backend is the scratch state of one PID.
type backend struct {
	open      *Statement // phases summed so far, before execute
	seen      uint8      // bit set of the open statement's phases
	lock      lockState
	announced *Entry // a log_statement line awaiting its bare duration line
}

// lockState is the lock wait reported for the backend's current statement.
type lockState struct {
	sql     string
	wait    time.Duration
	blocker int
}

// NewAggregator returns an Aggregator that passes statements to fn.
func NewAggregator(fn func(Statement)) *Aggregator {
	return &Aggregator{emit: fn, backends: map[int]*backend{}}
}

// Add takes the next entry of the log.
func (a *Aggregator) Add(e Entry) {
	if e.PID == 0 {
		return
	}
	b := a.backends[e.PID]
	if b == nil {
		b = &backend{}
		a.backends[e.PID] = b
	}
	switch {
	case e.Lock != LockNone:
		b.addLock(e)
	case e.Severity == "ERROR" || e.Severity == "FATAL" || e.Severity == "PANIC":
		a.fail(b, e)
	case !e.HasDuration && (e.Phase == PhaseStatement || e.Phase == PhaseExecute):
		b.announced = &e
	case e.bare && b.announced != nil:
		e.Phase, e.SQL, e.Name, e.Portal = b.announced.Phase, b.announced.SQL, b.announced.Name, b.announced.Portal
		b.announced = nil
		a.addPhase(b, e)
	case e.HasDuration && e.Phase != PhaseNone:
		a.addPhase(b, e)
	}
	if b.open == nil && b.announced == nil && b.lock == (lockState{}) {
		delete(a.backends, e.PID)
	}
}

// Flush ends every open statement (parse or bind lines not followed by
// execute), in PID order. Call it at the end of the log.
func (a *Aggregator) Flush() {
	for _, pid := range slices.Sorted(maps.Keys(a.backends)) {
		a.finish(a.backends[pid], false)
	}
	clear(a.backends)
}

// addPhase adds a duration line to the backend's statement.
func (a *Aggregator) addPhase(b *backend, e Entry) {
	bit := uint8(1) << e.Phase
	if b.open != nil && (e.Phase == PhaseStatement || e.Phase == PhaseParse ||
		b.open.SQL != e.SQL || b.open.Name != e.Name || b.seen&bit != 0) {
		a.finish(b, false) // an orphan: prepared but not executed
	}
	if b.open == nil {
		b.open = &Statement{PID: e.PID, SessionID: e.SessionID, SQL: e.SQL, Name: e.Name}
		b.seen = 0
	}
	b.open.Duration += e.Duration
	b.open.End = e.End
	b.open.Phases++
	b.seen |= bit
	if e.Phase == PhaseStatement || e.Phase == PhaseExecute {
		a.finish(b, true)
	}
}

// addLock records a log_lock_waits report for the backend's statement.
func (b *backend) addLock(e Entry) {
	if b.lock.sql != e.SQL {
		b.lock = lockState{sql: e.SQL}
	}
	b.lock.wait = max(b.lock.wait, e.LockWait)
	if b.lock.blocker == 0 && len(e.LockHolders) > 0 {
		b.lock.blocker = e.LockHolders[0]
	}
}

// fail ends the open statement, with the error when the error names its
// SQL or none, and forgets lock reports.
func (a *Aggregator) fail(b *backend, e Entry) {
	if b.open != nil {
		if e.SQL == "" || e.SQL == b.open.SQL {
			b.open.Error = e.Message
		}
		a.finish(b, false)
	}
	b.lock, b.announced = lockState{}, nil
}

// finish emits the open statement, if any, with the lock wait that names
// it (or names no SQL). A complete statement also clears a lock report naming another SQL:
// reports precede the duration line of the statement that waited.
func (a *Aggregator) finish(b *backend, complete bool) {
	s := b.open
	if s == nil {
		return
	}
	b.open, b.seen = nil, 0
	if b.lock != (lockState{}) && (b.lock.sql == s.SQL || b.lock.sql == "") {
		s.LockWait, s.Blocker = b.lock.wait, b.lock.blocker
		b.lock = lockState{}
	} else if complete {
		b.lock = lockState{}
	}
	s.Start = s.End.Add(-s.Duration)
	s.TraceParent, _ = FindTraceParent(s.SQL)
	a.emit(*s)
}
