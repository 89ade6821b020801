// Package pglog reads PostgreSQL's jsonlog (log_destination = 'jsonlog')
// as a stream and turns its lines into per-statement server times.
//
// A [Reader] yields one [Entry] per line, with the statement duration,
// protocol phase and lock-wait report parsed out of the free-text message
// (jsonlog has no field for them). [Statements] and [Aggregator] sum the
// parse, bind and execute lines of the extended protocol into one
// [Statement] and attach log_lock_waits reports to it. [FindTraceParent]
// recovers a W3C traceparent from a sqlcommenter comment in the SQL, and
// [Comment] writes one.
//
// Contracts and limits:
//   - Messages must be in English (lc_messages = 'C'); translated servers
//     yield entries with Phase None.
//   - Timestamps are the time a line was logged: for a duration line, the
//     end of the phase, at millisecond precision. Statement.Start is
//     End − Duration and so excludes client round trips between phases.
//   - A statement's Duration is server time only; a table-lock wait is
//     inside it (for the extended protocol, inside the parse phase).
//   - Memory is bounded by the longest line decoded (Options.MaxLineBytes,
//     16 MiB): a longer line, newline or not, is read past and returned as
//     an ErrLineTooLong LineError. Options.Context stops a Reader between
//     reads of at most 64 KiB.
//
// BUG(pglog): "execute fetch from" lines (a portal resumed after a row
// limit; pgx never does this) become statements of their own.
package pglog
