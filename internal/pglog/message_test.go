package pglog

import (
	"reflect"
	"testing"
	"time"
)

func TestParseMessage(t *testing.T) {
	const sql = "/*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ SELECT 1"
	tests := []struct {
		name     string
		severity string
		msg      string
		detail   string
		stmt     string
		want     Entry // parsed fields only
	}{
		{name: "simple", msg: "duration: 51.523 ms  statement: " + sql,
			want: Entry{Duration: 51523 * time.Microsecond, HasDuration: true, Phase: PhaseStatement, SQL: sql}},
		{name: "parse unnamed", msg: "duration: 0.283 ms  parse <unnamed>: " + sql,
			want: Entry{Duration: 283 * time.Microsecond, HasDuration: true, Phase: PhaseParse, SQL: sql}},
		{name: "parse named", msg: "duration: 0.245 ms  parse stmtcache_33eb: SELECT 1",
			want: Entry{Duration: 245 * time.Microsecond, HasDuration: true, Phase: PhaseParse, Name: "stmtcache_33eb", SQL: "SELECT 1"}},
		{name: "bind portal", msg: "duration: 0.1 ms  bind S_1/C_2: SELECT $1",
			want: Entry{Duration: 100 * time.Microsecond, HasDuration: true, Phase: PhaseBind, Name: "S_1", Portal: "C_2", SQL: "SELECT $1"}},
		{name: "execute", msg: "duration: 50.181 ms  execute <unnamed>: SELECT a: b",
			want: Entry{Duration: 50181 * time.Microsecond, HasDuration: true, Phase: PhaseExecute, SQL: "SELECT a: b"}},
		{name: "execute fetch", msg: "duration: 1.000 ms  execute fetch from <unnamed>/C_1: SELECT 1",
			want: Entry{Duration: time.Millisecond, HasDuration: true, Phase: PhaseExecute, Portal: "C_1", Fetch: true, SQL: "SELECT 1"}},
		{name: "bare duration", msg: "duration: 2.5 ms",
			want: Entry{Duration: 2500 * time.Microsecond, HasDuration: true, bare: true}},
		{name: "log_statement", msg: "statement: SELECT 1",
			want: Entry{Phase: PhaseStatement, SQL: "SELECT 1"}},
		{name: "log_statement execute", msg: "execute S_1: SELECT 1",
			want: Entry{Phase: PhaseExecute, Name: "S_1", SQL: "SELECT 1"}},
		{name: "plan (auto_explain)", msg: "duration: 3.000 ms  plan:\nSeq Scan",
			want: Entry{Duration: 3 * time.Millisecond, HasDuration: true}},
		{name: "bad number", msg: "duration: 1e3 ms  statement: SELECT 1"},
		{name: "negative", msg: "duration: -1.000 ms  statement: SELECT 1"},
		{name: "huge", msg: "duration: 99999999999999999 ms  statement: SELECT 1"},
		{name: "no ms", msg: "duration: 1.000"},
		{name: "error is not a phase", severity: "ERROR", msg: "bind message supplies 2 parameters: x", stmt: "SELECT 1",
			want: Entry{SQL: "SELECT 1"}},
		{name: "lock waiting", msg: "process 9459 still waiting for AccessShareLock on relation 16384 of database 5 after 100.205 ms",
			detail: "Process holding the lock: 9457. Wait queue: 9459.", stmt: sql,
			want: Entry{SQL: sql, Lock: LockWaiting, LockMode: "AccessShareLock", LockObject: "relation 16384 of database 5",
				LockWait: 100205 * time.Microsecond, LockHolders: []int{9457}}},
		{name: "lock acquired", msg: "process 9459 acquired AccessShareLock on relation 16384 of database 5 after 802.060 ms", stmt: sql,
			want: Entry{SQL: sql, Lock: LockAcquired, LockMode: "AccessShareLock", LockObject: "relation 16384 of database 5",
				LockWait: 802060 * time.Microsecond}},
		{name: "lock holders plural", msg: "process 7 still waiting for ShareLock on transaction 735 after 1000.000 ms",
			detail: "Processes holding the lock: 5, 6. Wait queue: 7, 8.",
			want:   Entry{Lock: LockWaiting, LockMode: "ShareLock", LockObject: "transaction 735", LockWait: time.Second, LockHolders: []int{5, 6}}},
		{name: "deadlock avoided", msg: "process 7 avoided deadlock for ExclusiveLock on tuple (0,1) of relation 1 of database 5 by rearranging queue order after 100.000 ms",
			want: Entry{Lock: LockDeadlockAvoided, LockMode: "ExclusiveLock", LockObject: "tuple (0,1) of relation 1 of database 5", LockWait: 100 * time.Millisecond}},
		{name: "deadlock", msg: "process 7 detected deadlock while waiting for ShareLock on transaction 9 after 100.000 ms",
			want: Entry{Lock: LockDeadlock, LockMode: "ShareLock", LockObject: "transaction 9", LockWait: 100 * time.Millisecond}},
		{name: "not a lock", msg: "process 7 did something"},
		{name: "startup", msg: "database system is ready to accept connections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sev := tt.severity
			if sev == "" {
				sev = "LOG"
			}
			e := Entry{Severity: sev, Message: tt.msg, Detail: tt.detail, Statement: tt.stmt}
			e.parseMessage()
			got := parsedFields(e)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parse of %q\n got %+v\nwant %+v", tt.msg, got, tt.want)
			}
		})
	}
}

// parsedFields keeps only the fields parseMessage sets.
func parsedFields(e Entry) Entry {
	return Entry{Duration: e.Duration, HasDuration: e.HasDuration, Phase: e.Phase, Name: e.Name, Portal: e.Portal,
		Fetch: e.Fetch, SQL: e.SQL, Lock: e.Lock, LockMode: e.LockMode, LockObject: e.LockObject,
		LockWait: e.LockWait, LockHolders: e.LockHolders, bare: e.bare}
}

func TestParseMillis(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0.283", 283 * time.Microsecond, true},
		{"1001.798", 1001798 * time.Microsecond, true},
		{"5", 5 * time.Millisecond, true},
		{"0.0000015", 1 * time.Nanosecond, true}, // below a nanosecond is cut
		{"", 0, false}, {".5", 0, false}, {"1.2.3", 0, false}, {"+1", 0, false}, {"1e3", 0, false},
		{"10000000000000", 0, false},
	}
	for _, tt := range tests {
		got, err := parseMillis(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseMillis(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestPhaseAndLockStrings(t *testing.T) {
	for p := PhaseNone; p <= PhaseExecute+1; p++ {
		if p.String() == "" {
			t.Errorf("Phase(%d) has no name", p)
		}
	}
	if PhaseParse.String() != "parse" || LockWaiting.String() != "waiting" || LockEvent(99).String() != "LockEvent(?)" {
		t.Errorf("names: %s %s %s", PhaseParse, LockWaiting, LockEvent(99))
	}
}
