// Package analysis is the read loop every analysis of a Go execution trace
// goes through (Run): the CLI's commands, the lab and the tests. It drives
// the streaming analysers (budget, sched, dbwait) with one pass over the
// trace, finds the main module the agent logged, and turns damage into
// typed errors. The analyses themselves live in their packages; this one
// owns only the I/O.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// Consumer is another streaming analysis fed by the same read loop (the
// scheduler analysis, say). It is created once the stack table exists.
// Consumers are independent: Run gives each a batch of records before the
// next consumer gets the same batch.
type Consumer interface{ Event(ev *tracein.Event) }

// BatchConsumer is a Consumer that takes a batch of records at once, as
// many calls of Event in order: one dynamic call per batch instead of one
// per record.
type BatchConsumer interface {
	Consumer
	Events(recs []tracein.Event)
}

// NewConsumer creates a Consumer for a trace's stack table, with the rules
// that decide application frames (the caller's, or with the main module
// the trace names: see Reader).
type NewConsumer func(stacks *tracein.Stacks, rules frame.Rules) Consumer

// Options say how Run reads a trace.
type Options struct {
	// Rules decide which frames are the application's. When they name
	// neither the application (App) nor the main module (Module) and
	// FindModule is set, the main module comes from the trace (see Run).
	Rules      frame.Rules
	FindModule bool
	// Partial analyses a damaged trace up to the damage: Run returns the
	// damage as lost instead of an error.
	Partial bool
}

// Use returns a NewConsumer for an analyser made beforehand, one that needs
// neither the stack table nor the rules (dbwait's, say).
func Use(c Consumer) NewConsumer {
	return func(*tracein.Stacks, frame.Rules) Consumer { return c }
}

// File analyses the trace in the named file ("-" reads standard input).
// With partial, a damaged trace is analysed up to the damage and a finding
// says so; otherwise the damage is an error naming the offset. Each of also
// sees every record too.
func File(ctx context.Context, name string, opts budget.Options, partial bool, also ...NewConsumer) (*budget.Result, error) {
	var res *budget.Result
	err := open(name, func(r io.Reader) (err error) {
		res, err = Reader(ctx, name, r, opts, partial, also...)
		return err
	})
	return res, err
}

// RunFile is Run on the named file ("-" reads standard input).
func RunFile(ctx context.Context, name string, opts Options, analysers ...NewConsumer) (lost error, err error) {
	err = open(name, func(r io.Reader) error {
		lost, err = Run(ctx, name, r, opts, analysers...)
		return err
	})
	return lost, err
}

// open passes the named file ("-": standard input) to fn.
func open(name string, fn func(io.Reader) error) error {
	if name == "-" {
		return fn(os.Stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return &tracein.Error{Name: name, Offset: -1, Msg: "is a directory, not a trace file"}
	}
	return fn(f)
}

// Reader analyses a trace read from r with package budget; name is used in
// errors. The main module comes from the trace unless opts.Rules name the
// application or the module (see Run).
func Reader(ctx context.Context, name string, r io.Reader, opts budget.Options, partial bool, also ...NewConsumer) (*budget.Result, error) {
	var a *budget.Analyzer
	mk := func(stacks *tracein.Stacks, rules frame.Rules) Consumer {
		o := opts
		o.Rules = rules
		a = budget.New(o, stacks)
		return a
	}
	lost, err := Run(ctx, name, r, Options{Rules: opts.Rules, FindModule: true, Partial: partial}, append([]NewConsumer{mk}, also...)...)
	if err != nil {
		return nil, err
	}
	res := a.Finalize()
	if lost != nil {
		res.Warnings = append(res.Warnings, &budget.Finding{Kind: budget.FindCutByWindow, Text: fmt.Sprintf("the trace is damaged; analysed %d records before: %v; requests open at that point are excluded", res.Info.Records, lost)})
		blameDamage(res, lost)
	}
	return res, nil
}

// blameDamage rewrites a no-requests refusal of a trace that broke off as
// the damage it is: the trace ended before any request could complete, so
// advice to add tasks would send the user after instrumentation that may
// well be there.
func blameDamage(res *budget.Result, lost error) {
	for _, w := range res.Warnings {
		f, ok := w.(*budget.Finding)
		if !ok || f.Kind != budget.FindNoRequests || !f.Refuse {
			continue
		}
		at := "where it breaks"
		if te, ok := errors.AsType[*tracein.Error](lost); ok && te.Offset >= 0 {
			at = fmt.Sprintf("at offset %d", te.Offset)
		}
		f.Text = fmt.Sprintf("the trace is damaged %s, before any complete request (%d records read): %v; nothing to analyse: record the trace again (a complete file from /debug/pprof/trace, or latscope capture)", at, res.Info.Records, lost)
	}
}

// Run is the read loop every analysis of a Go trace goes through: it reads
// the trace from r (name is used in errors) and passes every record, in
// order, to each analyser the constructors make.
//
// When opts.FindModule is set and opts.Rules name neither the application
// nor the main module, the main module comes from the trace: the agent
// logs it (tracelog.Module) every tracelog.ModuleEvery, so the records of
// the trace's first tracelog.ModuleLookahead are held until its log is
// found, and the analysers are created with it, before any of them sees a
// stack. A trace without the log is analysed by the default rules.
//
// A damaged trace is an error (a *DamagedError once records were read),
// unless opts.Partial: then the analysers have seen the records before the
// damage, and Run returns the damage as lost.
func Run(ctx context.Context, name string, r io.Reader, opts Options, analysers ...NewConsumer) (lost error, err error) {
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		return nil, err
	}
	defer lowerGC()()     // (gc.go)
	stacks := tr.Stacks() // only this goroutine touches it (see pipe.go)
	rules := opts.Rules
	var run []Consumer
	start := func() {
		for _, mk := range analysers {
			run = append(run, mk(stacks, rules))
		}
	}
	look := lookahead{on: opts.FindModule && rules.Module == "" && len(rules.App) == 0}
	if !look.on {
		start()
	}
	feed := func(recs []tracein.Event) {
		for _, c := range run {
			if bc, ok := c.(BatchConsumer); ok {
				bc.Events(recs)
				continue
			}
			for i := range recs {
				c.Event(&recs[i])
			}
		}
	}
	p := startPipe(name, tr)
	defer p.stop()
	var tune gcTuner
	for {
		b, err := p.next(ctx)
		if err != nil {
			return nil, err
		}
		tune.batch()
		if n, err := stacks.Resolve(b.recs); err != nil { // a damaged stack table: analyse the records before its first use
			b.recs, b.err = b.recs[:n], err
		}
		var te *tracein.Error
		if errors.As(b.err, &te) && te.Offset < 0 { // resolving and converting know no offset: the batch's
			te.Offset = b.offset
		}
		if look.on {
			if mod, done := look.add(b.recs, b.err != nil); done {
				if mod == "" {
					mod = mainModule(stacks)
					rules.ModuleFromMain = mod != ""
				}
				rules.Module = mod
				start()
				look.release(feed)
				look = lookahead{}
			}
		} else {
			feed(b.recs)
		}
		if err := b.err; err != nil {
			if err == io.EOF {
				return nil, nil
			}
			if !opts.Partial {
				return nil, &DamagedError{Err: err}
			}
			return err, nil
		}
		p.recycle(b)
	}
}

// mainModule returns the module that holds package main's source when it
// was compiled from the module cache (a binary installed with `go install
// module@version`: its own code lies there too, beside its dependencies'),
// from the stacks read so far; "" when package main's files are the
// service's own source tree, or no frame of package main was seen. main.main
// is preferred (it is on the main goroutine's stack, which a trace gives
// from its first generation), then any function of package main.
func mainModule(stacks *tracein.Stacks) string {
	other := ""
	for id := 1; id < stacks.Len(); id++ {
		for _, f := range stacks.Frames(tracein.StackID(id)) {
			if frame.Package(f.Func) != "main" {
				continue
			}
			mod, ok := frame.ModuleOfFile(f.File)
			if !ok {
				if f.Func == "main.main" {
					return "" // built from its own source: the default rule holds
				}
				continue
			}
			if f.Func == "main.main" {
				return mod
			}
			if other == "" {
				other = mod
			}
		}
	}
	return other
}

// maxHeld bounds the records held while looking for the main module.
const maxHeld = 1 << 18

// lookahead holds the first records of a trace while it looks for the
// agent's main-module log. It keeps each batch as a copy of its own, not
// one slice appended to: growing one slice to maxHeld records copied it at
// every doubling, and held the old and the new array at once at the last
// (about 140 MB of a 200 MB peak RSS on a dense 100 MiB trace). The copies
// are compact (heldEvent, 88 bytes, not a record's 176): a trace without
// the log (any trace not recorded with the agent) has its first maxHeld
// records held, which made the lookahead most of the peak RSS on a trace
// of a few MB.
type lookahead struct {
	on      bool
	held    [][]heldEvent
	n       int // records held
	first   tracein.Time
	started bool
	strs    []string          // heldEvent's strings; strs[0] is ""
	strIDs  map[string]uint32 // index in strs
	walls   []time.Time       // heldEvent's wall clock readings, from walls[1]
}

// heldEvent is a record as the lookahead holds it: the fields of a
// tracein.Event after tracein.Stacks.Resolve (whose stacks from the trace
// are then gone), its strings and wall clock reading as indexes into the
// lookahead's tables. TestHeldEventFields keeps it in step with
// tracein.Event.
type heldEvent struct {
	Time                  tracein.Time
	G, Actor              tracein.GoID
	Thread, Proc          int64
	Task, Parent          tracein.TaskID
	Stack, ActorStack     tracein.StackID
	name, reason, message uint32 // in lookahead.strs
	wall                  uint32 // in lookahead.walls; 0: the zero time
	Kind                  tracein.Kind
	From, To              tracein.State
}

// str returns the index of s in l.strs, adding it.
func (l *lookahead) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if id, ok := l.strIDs[s]; ok {
		return id
	}
	if l.strIDs == nil {
		l.strIDs = map[string]uint32{}
		l.strs = []string{""}
	}
	id := uint32(len(l.strs))
	l.strs = append(l.strs, s)
	l.strIDs[s] = id
	return id
}

// hold returns ev as the lookahead holds it.
func (l *lookahead) hold(ev *tracein.Event) heldEvent {
	h := heldEvent{
		Time: ev.Time, G: ev.G, Actor: ev.Actor, Thread: ev.Thread, Proc: ev.Proc,
		Task: ev.Task, Parent: ev.Parent, Stack: ev.Stack, ActorStack: ev.ActorStack,
		name: l.str(ev.Name), reason: l.str(ev.Reason), message: l.str(ev.Message),
		Kind: ev.Kind, From: ev.From, To: ev.To,
	}
	if !ev.Wall.IsZero() {
		if len(l.walls) == 0 {
			l.walls = []time.Time{{}}
		}
		h.wall = uint32(len(l.walls))
		l.walls = append(l.walls, ev.Wall)
	}
	return h
}

// record returns the record h holds.
func (l *lookahead) record(h *heldEvent) tracein.Event {
	ev := tracein.Event{
		Kind: h.Kind, From: h.From, To: h.To, Time: h.Time, G: h.G, Actor: h.Actor,
		Thread: h.Thread, Proc: h.Proc, Stack: h.Stack, ActorStack: h.ActorStack,
		Task: h.Task, Parent: h.Parent,
	}
	if h.name|h.reason|h.message != 0 {
		ev.Name, ev.Reason, ev.Message = l.strs[h.name], l.strs[h.reason], l.strs[h.message]
	}
	if h.wall != 0 {
		ev.Wall = l.walls[h.wall]
	}
	return ev
}

// add holds recs (copied: the batch is recycled) and reports whether the
// search is over, with the module found ("" when none): a log was found,
// the records span tracein.ModuleLookahead, too many are held, or the
// trace ended (last).
func (l *lookahead) add(recs []tracein.Event, last bool) (string, bool) {
	held := make([]heldEvent, len(recs))
	for i := range recs {
		held[i] = l.hold(&recs[i])
	}
	l.held = append(l.held, held)
	l.n += len(recs)
	for i := range recs {
		ev := &recs[i]
		if !l.started {
			l.first, l.started = ev.Time, true
		}
		if time.Duration(ev.Time-l.first) >= tracelog.ModuleLookahead {
			return "", true // not in the window every agent's trace has it in
		}
		if ev.Kind == tracein.KindLog && ev.Name == tracelog.Module {
			if mod := strings.TrimSpace(ev.Message); mod != "" && !strings.ContainsAny(mod, " \t\n") {
				return mod, true
			}
		}
	}
	return "", last || l.n >= maxHeld
}

// release passes the held records to feed, in order, a batch's worth at a
// time, letting each batch go once fed.
func (l *lookahead) release(feed func([]tracein.Event)) {
	recs := make([]tracein.Event, 0, batchLen)
	for i, held := range l.held {
		for j := range held {
			recs = append(recs, l.record(&held[j]))
			if len(recs) == cap(recs) {
				feed(recs)
				recs = recs[:0]
			}
		}
		l.held[i] = nil
	}
	if len(recs) > 0 {
		feed(recs)
	}
}

// DamagedError is returned when the trace breaks off after records that
// could be read and a partial analysis was not asked for: analysing with
// partial set would read what came before the damage.
type DamagedError struct{ Err error }

// Error returns the reader's error.
func (e *DamagedError) Error() string { return e.Err.Error() }

// Unwrap returns the reader's error.
func (e *DamagedError) Unwrap() error { return e.Err }
