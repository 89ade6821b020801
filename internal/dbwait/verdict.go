package dbwait

import "fmt"

// Verdict is where a DB span's time went.
type Verdict uint8

// Verdicts. Inside: the difference is within the threshold; the others
// classify time outside the database.
const (
	Inside Verdict = iota
	Throttled
	Steal
	Paused
	Runnable
	Network
	// DBCPU: the database backend waited on its own host's run queue for
	// half the outside time, before its timer started or after it stopped
	// (a recording of the database host's run-queue waits, package dbhost).
	DBCPU
	Mixed // a CPU cause and a wait outside the process each explain a third or more
	Unknown
	NumVerdicts
)

var verdictNames = [...]string{
	Inside: "inside", Throttled: "throttled", Steal: "steal",
	Paused: "paused", Runnable: "runnable", Network: "network", DBCPU: "db-cpu", Mixed: "mixed", Unknown: "unknown",
}

// String returns the verdict's lower-case name.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// MarshalText encodes the name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes a name.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, n := range verdictNames {
		if n == string(b) {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("dbwait: unknown verdict %q", b)
}
