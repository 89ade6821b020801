// Package tracein is a thin adapter over golang.org/x/exp/trace. It reads a Go
// execution trace in one streaming pass and hands out small, copied-out
// records (Event) whose stacks are interned into a Stacks table, so analyses
// never hold a *trace.Event or a trace-internal table.
//
// It does no analysis. Errors name the input and the byte offset reached.
package tracein
