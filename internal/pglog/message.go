package pglog

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// parseMessage fills e's parsed fields from its Message and Detail.
// Messages it does not recognise leave them zero; that is not an error.
func (e *Entry) parseMessage() {
	if rest, ok := strings.CutPrefix(e.Message, "duration: "); ok {
		e.parseDuration(rest)
	} else if e.Severity != "LOG" || !e.parsePhase(e.Message) {
		e.parseLock()
	}
	if e.SQL == "" {
		e.SQL = e.Statement
	}
}

// parseDuration handles "<N> ms" and what follows "duration: ".
func (e *Entry) parseDuration(rest string) {
	num, rest, ok := strings.Cut(rest, " ms")
	if !ok {
		return
	}
	d, err := parseMillis(num)
	if err != nil {
		return
	}
	e.Duration, e.HasDuration = d, true
	rest = strings.TrimLeft(rest, " ")
	if rest == "" {
		e.bare = true
		return
	}
	e.parsePhase(rest)
}

// parsePhase handles "statement: <sql>", "parse <name>: <sql>", "bind
// <name>[/<portal>]: <sql>" and "execute [fetch from ]<name>[/<portal>]:
// <sql>", with or without a preceding duration (log_statement logs them at
// LOG without). It reports whether s was one of them.
func (e *Entry) parsePhase(s string) bool {
	if sql, ok := strings.CutPrefix(s, "statement: "); ok {
		e.Phase, e.SQL = PhaseStatement, sql
		return true
	}
	word, rest, _ := strings.Cut(s, " ")
	var phase Phase
	switch word {
	case "parse":
		phase = PhaseParse
	case "bind":
		phase = PhaseBind
	case "execute":
		phase = PhaseExecute
		rest, e.Fetch = cutFetch(rest)
	default:
		return false
	}
	name, sql, ok := strings.Cut(rest, ": ")
	if !ok {
		e.Fetch = false
		return false
	}
	if phase != PhaseParse {
		name, e.Portal, _ = strings.Cut(name, "/")
	}
	e.Phase, e.Name, e.SQL = phase, unnamed(name), sql
	e.Portal = unnamed(e.Portal)
	return true
}

// cutFetch strips the "fetch from " of a resumed portal's execute line.
func cutFetch(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "fetch from "); ok {
		return rest, true
	}
	return s, false
}

// unnamed maps PostgreSQL's "<unnamed>" to "".
func unnamed(name string) string {
	if name == "<unnamed>" {
		return ""
	}
	return name
}

// lockVerbs maps what follows "process N " to the lock event.
var lockVerbs = []struct {
	prefix string
	event  LockEvent
}{
	{"still waiting for ", LockWaiting},
	{"acquired ", LockAcquired},
	{"avoided deadlock for ", LockDeadlockAvoided},
	{"detected deadlock while waiting for ", LockDeadlock},
	{"failed to acquire ", LockFailed},
}

// parseLock handles the log_lock_waits messages "process N <verb> <mode>
// on <object> after T ms" and the holders in Detail.
func (e *Entry) parseLock() {
	rest, ok := strings.CutPrefix(e.Message, "process ")
	if !ok {
		return
	}
	pid, rest, ok := strings.Cut(rest, " ")
	if _, err := strconv.Atoi(pid); !ok || err != nil {
		return
	}
	var event LockEvent
	for _, v := range lockVerbs {
		if r, ok := strings.CutPrefix(rest, v.prefix); ok {
			event, rest = v.event, r
			break
		}
	}
	mode, rest, ok := strings.Cut(rest, " on ")
	i := strings.LastIndex(rest, " after ")
	if event == LockNone || !ok || i < 0 {
		return
	}
	num, ok := strings.CutSuffix(rest[i+len(" after "):], " ms")
	wait, err := parseMillis(num)
	if !ok || err != nil {
		return
	}
	e.Lock, e.LockMode, e.LockWait = event, mode, wait
	e.LockObject = strings.TrimSuffix(rest[:i], " by rearranging queue order")
	e.LockHolders = lockHolders(e.Detail)
}

// lockHolders parses "Process holding the lock: 9457. Wait queue: 9459."
// and its plural "Processes holding the lock: 1, 2. ...".
func lockHolders(detail string) []int {
	_, rest, ok := strings.Cut(detail, "holding the lock: ")
	if !ok || !strings.HasPrefix(detail, "Process") {
		return nil
	}
	list, _, _ := strings.Cut(rest, ".")
	var pids []int
	for f := range strings.SplitSeq(list, ",") {
		if pid, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// maxMillis keeps parsed durations far from time.Duration's overflow.
const maxMillis = int64(1e12) // about 31 years

var errMillis = errors.New("not a millisecond count")

// parseMillis parses PostgreSQL's "%.3f" milliseconds ("51.523") exactly,
// to the nanosecond.
func parseMillis(s string) (time.Duration, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(whole) > 13 || !allDigits(whole) || !allDigits(frac) {
		return 0, errMillis
	}
	ms, _ := strconv.ParseInt(whole, 10, 64)
	if ms > maxMillis {
		return 0, errMillis
	}
	frac = (frac + "000000")[:6] // nanoseconds within the millisecond
	ns, _ := strconv.ParseInt(frac, 10, 64)
	return time.Duration(ms)*time.Millisecond + time.Duration(ns), nil
}

// allDigits reports whether s holds only ASCII digits ("" counts).
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
