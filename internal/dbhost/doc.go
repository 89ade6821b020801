// Package dbhost records, on the database's host, how long each database
// backend waited on the kernel's run queue, and answers how much of that
// wait fell in a window of time.
//
// A statement's time outside the database's own timer (the application's
// span minus the statement's logged duration) holds the network both
// ways and the backend's own wait for a CPU before its timer started (it
// was woken by the query and read it late) and after it stopped (it
// logged the end and waited to send the answer). The application's host
// cannot see the last two; the backend's /proc/PID/schedstat run-queue
// counter, sampled on the database's host, can. [Recorder] samples the
// postmaster's children every period and writes a line whenever a
// backend's counter moved; [Read] parses such a file into [Waits], which
// dbwait asks about each statement's window (docs/dbwait.md).
//
// The file is text, one record per line, three decimal fields:
//
//	UNIX_NS PID RUN_DELAY_NS
//
// after a first line "latscope-dbhost 1 period_ns=N". A backend's first
// line is written when it is first seen, later ones only when its
// counter moved. PID 0 is the recorder's own: a heartbeat every second
// (third field 0), so that a reader knows which times the recording
// covers, and a line at every pass that came more than 1.5 periods after
// the previous one (third field: that gap in ns), so that a reader knows
// the counters written then moved at any time in the gap — the recorder
// itself may wait for a CPU on a busy host.
package dbhost
