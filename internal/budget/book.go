package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
)

// Book is a request type's accumulator, the one the Go and the JVM
// analyses book each request into: its latencies, how many forked, whose
// critical path did not add up, the critical time no timeline explained,
// each prediction's simulated latency, and its terms. Each analysis keeps
// its own besides (Go: CPU by frame, stacks, root causes, regions; the
// JVM: holds, exact CPU, the server's queue).
type Book struct {
	TermBook
	Count    int       // requests booked
	Lat      []int64   // their latencies, in the order booked
	Forked   int       // requests that ran on more than one goroutine or thread
	Mismatch int       // requests whose critical path did not sum to their latency (a bug)
	Unknown  int64     // critical time no timeline explained
	Pred     [][]int64 // by prediction, each request's simulated latency
}

// Request books one request: its latency, its committed goroutines (or
// threads) and the sum of its critical path.
func (b *Book) Request(lat int64, committed int, pathSum int64) {
	b.Count++
	b.Lat = append(b.Lat, lat)
	if committed > 1 {
		b.Forked++
	}
	if pathSum != lat {
		b.Mismatch++
	}
}

// Predict books req's simulated latency under each of preds, over the
// term table terms.
func (b *Book) Predict(sc *critpath.Scratch, req *critpath.Request, preds []Prediction, terms []Term) {
	if len(b.Pred) < len(preds) {
		b.Pred = append(b.Pred, make([][]int64, len(preds)-len(b.Pred))...)
	}
	for i, p := range preds {
		b.Pred[i] = append(b.Pred[i], sc.Simulate(req, p.Model(terms)))
	}
}

// Fill sets g's statistics that the book holds (not its terms, which each
// analysis orders and completes): the count, latencies, forks, mismatches,
// the unexplained critical time and the predictions over terms.
func (b *Book) Fill(g *Group, preds []Prediction, terms []Term) {
	g.Count, g.Latencies, g.Latency = b.Count, b.Lat, stats(b.Lat)
	g.Forked, g.PathMismatch, g.Unknown = b.Forked, b.Mismatch, b.Unknown
	for i, p := range preds {
		var series []int64
		if i < len(b.Pred) {
			series = b.Pred[i]
		}
		s := stats(series)
		g.Predictions = append(g.Predictions, PredictionResult{Prediction: p, Mean: s.Mean, P99: s.P99, Matched: p.MatchesAny(terms), Latencies: series})
	}
}

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
