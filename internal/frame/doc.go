// Package frame decides, in one place, which stack frame a wait belongs to
// (docs/method.md §3): the application frame is the innermost frame of the user's
// code, the mechanism is the innermost frame that is not runtime machinery,
// and the kind comes from the runtime's wait reason. Every command uses
// these rules.
package frame
