package budget

import (
	"strings"

	"github.com/latscope/latscope/critpath"
	"github.com/latscope/latscope/frame"
	"github.com/latscope/latscope/tracein"
)

// Term is one row of a budget: an application frame, a mechanism and a kind.
type Term struct {
	Frame     string     // innermost application frame; "" when the stack has none
	Mechanism string     // innermost non-runtime frame; "" when the frame blocked itself
	Kind      frame.Kind // from the runtime's wait reason
}

type termKey struct {
	app, mech string
	kind      frame.Kind
}

// stackInfo is what the analyser needs to know about a stack, computed once.
type stackInfo struct {
	attr     frame.Attribution
	outerApp string // outermost application frame (the handler, for inferred requests)
	flags    uint8
	computed bool
	// termKind and termID remember the term of the last wait on this stack
	// (a stack nearly always blocks with one kind), valid when hasTerm.
	termKind frame.Kind
	hasTerm  bool
	termID   critpath.TermID
}

const (
	flagServe       = 1 << iota // net/http.(*conn).serve
	flagReadRequest             // blocked reading the next request (idle)
	flagHandler                 // inside a net/http handler
	flagDone                    // the response was written (finishRequest/abortPendingRead)
	flagNoAdopt                 // a net/http server goroutine that is never a request's child
)

// terms interns terms and caches per-stack attribution.
type terms struct {
	rules  *frame.Rules
	stacks *tracein.Stacks
	list   []Term
	index  map[termKey]critpath.TermID
	info   []stackInfo // by StackID
	funcs  []string    // scratch
}

func newTerms(rules *frame.Rules, stacks *tracein.Stacks) *terms {
	return &terms{rules: rules, stacks: stacks, index: map[termKey]critpath.TermID{}}
}

// stack returns the cached information of a stack.
func (t *terms) stack(id tracein.StackID) *stackInfo {
	for int(id) >= len(t.info) {
		t.info = append(t.info, stackInfo{})
	}
	si := &t.info[id]
	if si.computed {
		return si
	}
	si.computed = true
	t.funcs = t.funcs[:0]
	prev := ""
	for _, f := range t.stacks.Frames(id) {
		t.funcs = append(t.funcs, f.Func)
		switch f.Func {
		case "net/http.(*conn).serve":
			si.flags |= flagServe
			if prev == "bufio.(*Reader).Peek" {
				si.flags |= flagReadRequest // keep-alive: waiting for the next request's first bytes
			}
		case "net/http.(*conn).readRequest":
			si.flags |= flagReadRequest
		case "net/http.serverHandler.ServeHTTP":
			si.flags |= flagHandler
		case "net/http.(*connReader).abortPendingRead", "net/http.(*response).finishRequest":
			si.flags |= flagDone
		case "net/http.(*connReader).backgroundRead":
			si.flags |= flagNoAdopt
		}
		if t.rules.IsApp(f.Func) {
			si.outerApp = f.Func
		}
		prev = f.Func
	}
	si.attr = t.rules.Decide(t.funcs)
	return si
}

// term returns the TermID for a wait of kind k on stack id.
func (t *terms) term(id tracein.StackID, k frame.Kind) critpath.TermID {
	si := t.stack(id)
	if si.hasTerm && si.termKind == k {
		return si.termID
	}
	a := si.attr
	key := termKey{app: a.App, mech: a.Mechanism, kind: k}
	tid, ok := t.index[key]
	if !ok {
		tid = critpath.TermID(len(t.list))
		t.list = append(t.list, Term{Frame: a.App, Mechanism: a.Mechanism, Kind: k})
		t.index[key] = tid
	}
	si.hasTerm, si.termKind, si.termID = true, k, tid
	return tid
}

// Name returns a term's display name: "frame (mechanism, kind)".
func (t Term) Name() string {
	var b strings.Builder
	if t.Frame == "" {
		b.WriteString("(no app frame)")
	} else {
		b.WriteString(frame.Short(t.Frame))
	}
	b.WriteString(" [")
	if t.Mechanism != "" {
		b.WriteString(frame.Short(t.Mechanism))
		b.WriteString(", ")
	}
	b.WriteString(t.Kind.String())
	b.WriteString("]")
	return b.String()
}
