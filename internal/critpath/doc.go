// Package critpath holds one request's goroutine timelines and the wakeup
// edges between them, walks the critical path backwards from the request's
// end (docs/method.md §4), and re-simulates the request with a term removed, scaled
// or overlapped with another (docs/method.md §5).
//
// It is pure: a Request is built by the streaming analyser (package budget)
// and only read here.
package critpath
