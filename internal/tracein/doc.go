// Package tracein is a thin adapter over golang.org/x/exp/trace. It reads a Go
// execution trace in one streaming pass and hands out small, copied-out
// records (Event) whose stacks are interned into a Stacks table, so analyses
// never hold a *trace.Event or a trace-internal table. It reads every format
// x/exp/trace does: Go 1.11–1.21 (converted) and Go 1.22 on.
//
// It does no analysis. Errors are *Error: one line naming the input and the
// byte offset reached, with the parser's longer text (a state dump, the stack
// of a recovered panic) behind Details. Damaged input never panics: the
// parser's panics, including those of stack and string tables read lazily
// while interning, are recovered and returned as errors.
package tracein
