// Package critpath holds one request's goroutine timelines and the wakeup
// edges between them, walks the critical path backwards from the request's
// end (design §3), and re-simulates the request with a term removed, scaled
// or overlapped with another (design §4).
//
// It is pure: a Request is built by the streaming analyser (package budget)
// and only read here.
package critpath
