package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
)

// TermBook accumulates a request type's terms over its requests, by
// TermID — the time in each term's waits (goroutine time), its time on
// the critical path by the kind of wait beneath it, what removing it would
// save (Fix), the CPU measured inside it, and how many requests met it:
// the one accumulator of terms that the Go and the JVM analyses book
// into. The zero value is empty.
type TermBook struct {
	terms []*termAcc // by TermID; nil where the term never occurred
}

// term returns t's accumulator, made on first use.
func (b *TermBook) term(t critpath.TermID) *termAcc {
	for int(t) >= len(b.terms) {
		b.terms = append(b.terms, nil)
	}
	if b.terms[t] == nil {
		b.terms[t] = &termAcc{}
	}
	return b.terms[t]
}

// Wait adds d of goroutine (or thread) time in t's waits.
func (b *TermBook) Wait(t critpath.TermID, d int64) { b.term(t).wait += d }

// Met counts one more request that met t.
func (b *TermBook) Met(t critpath.TermID) { b.term(t).requests++ }

// Critical adds d of t's time on a request's critical path, in a wait (or
// a cause beneath it) of kind k.
func (b *TermBook) Critical(t critpath.TermID, k frame.Kind, d int64) {
	ts := b.term(t)
	ts.crit += d
	ts.causes[k] += d
}

// Fix adds what removing t saves in one request (Fix.Gain).
func (b *TermBook) Fix(t critpath.TermID, gain int64) { b.term(t).fix += gain }

// CPU adds thread CPU measured inside t (a JVM hold's).
func (b *TermBook) CPU(t critpath.TermID, d int64) { b.term(t).cpu += d }

// Each calls fn for every term booked, in TermID order, with its
// statistics (Term set to its id; the Go analysis adds its roots).
func (b *TermBook) Each(fn func(TermStat)) {
	for tid, t := range b.terms {
		if t == nil {
			continue
		}
		fn(TermStat{Term: critpath.TermID(tid), Wait: t.wait, Critical: t.crit, Fix: t.fix, Along: t.along, AlongRunnable: t.alongRunnable,
			Contention: t.contention, CPU: t.cpu, Requests: t.requests, Causes: t.causes})
	}
}
