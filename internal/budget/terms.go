package budget

import (
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// Term is one row of a budget: an application call path, a mechanism and a
// kind. Two waits beneath one shared helper are one term only when they
// were reached by the same chain of application frames.
type Term struct {
	Frame string // innermost application frame; "" when the stack has none
	// Path is the application call path: the application frames of the
	// blocking stack, outermost first, ending at Frame (direct recursion
	// folded to one frame). Empty when Frame is.
	Path      []string
	Mechanism string     // innermost non-runtime frame; "" when the frame blocked itself
	Kind      frame.Kind // from the runtime's wait reason
	// Fallback is set when no frame of the stack was compiled from the
	// service's own source, so Frame is a dependency's (frame.DecideFiles).
	Fallback bool
	// Beneath marks the CPU of a frame estimated from the stacks at state
	// changes (cpu.go): the frame stayed on the stack while it ran, so the
	// CPU was its own or that of a function it called and that returned
	// before the goroutine stopped. A CPU term from samples is the frame's
	// own (with the libraries it called).
	Beneath bool
}

type termKey struct {
	path, mech        string
	kind              frame.Kind
	fallback, beneath bool
}

// stackInfo is what the analyser needs to know about a stack, computed once.
type stackInfo struct {
	attr     frame.Attribution
	outerApp string   // outermost application frame (the handler, for inferred requests)
	path     []string // application call path, outermost first (interned)
	pathKey  string
	flags    uint16
	computed bool
	// handler is the application handler a router dispatched to: the
	// innermost application frame called by a dispatch frame (ServeHTTP,
	// gin's Next); depth counts the dispatch frames above it (0: none, and
	// handler is outerApp). docs/method.md §2, "Inferred requests by handler".
	handler      string
	handlerDepth int
	// rpc is the gRPC method of a grpc-go handler goroutine's stack ("" when
	// the stack is not one, or names none): "/pkg.Svc/Method" from the
	// generated _Svc_Method_Handler, else the service method's frame.
	rpc string
	// termKind and termID remember the term of the last wait on this stack
	// (a stack nearly always blocks with one kind), valid when hasTerm.
	termKind frame.Kind
	hasTerm  bool
	termID   critpath.TermID
	// cpuID is the CPU term of a CPU sample with this stack (NoTerm without
	// an application frame), valid when hasCPU; site is the stack's place
	// in the code for the CPU contexts (cpu.go), valid when hasSite.
	cpuID   critpath.TermID
	hasCPU  bool
	site    int32
	hasSite bool
}

const (
	flagServe       = 1 << iota // net/http.(*conn).serve
	flagReadRequest             // blocked reading the next request (idle)
	flagHandler                 // inside a net/http handler
	flagDone                    // the response was written (finishRequest/abortPendingRead)
	flagNoAdopt                 // a net/http server goroutine that is never a request's child
	flagJoinAll                 // a wait that joins every goroutine started before it (critpath.Seg.JoinAll)
	flagTransport               // an HTTP client transport's goroutine (dial, readLoop, writeLoop): never a request's child
	flagRPC                     // a grpc-go server goroutine running one RPC's handler (its outermost frame is serveStreams' closure)
	flagRPCRead                 // grpc-go's server transport reading a connection ((*http2Server).HandleStreams)
	flagRPCWrite                // grpc-go's server transport writing a connection ((*loopyWriter).run under NewServerTransport)
)

// transportStart are the start functions (prefixes) of the goroutines an
// HTTP client's transport runs for a connection. Created by whichever
// request needed a connection, they serve every request that later uses it;
// with the default transport's 2 idle connections per host, one can end
// inside the request that created it (the connection is closed when the
// idle pool is full), and adopting it would charge its network read to no
// application frame instead of the caller waiting for it (issue #36). Never
// adopted, they explain the caller's wait as any goroutine of no request
// does (docs/method.md §2, §4).
var transportStart = []string{
	"net/http.(*Transport).",
	"net/http.(*persistConn).",
	"net/http.(*http2ClientConn).",
	"net/http.(*http2clientStream).",
	"net/http.(*http2Transport).",
	"net/http.(*http2dialCall).",
	"net/http.(*http2addConnCall).",
	"golang.org/x/net/http2.(*ClientConn).",
	"golang.org/x/net/http2.(*clientStream).",
	"golang.org/x/net/http2.(*Transport).",
	"golang.org/x/net/http2.(*dialCall).",
	"golang.org/x/net/http2.(*addConnCall).",
}

// terms interns terms and caches per-stack attribution.
type terms struct {
	rules  *frame.Rules
	stacks *tracein.Stacks
	list   []Term
	index  map[termKey]critpath.TermID
	info   []stackInfo // by StackID
	funcs  []string    // scratch
	files  []string    // scratch
	apps   []string    // scratch: application frames, leaf first
	paths  map[string][]string
	// spans caches the CPU term of running time between two stacks (cpu.go);
	// sites numbers the call paths that places in the code are known by.
	spans map[[2]tracein.StackID]critpath.TermID
	sites map[string]int32
}

func newTerms(rules *frame.Rules, stacks *tracein.Stacks) *terms {
	return &terms{rules: rules, stacks: stacks, index: map[termKey]critpath.TermID{}, paths: map[string][]string{},
		spans: map[[2]tracein.StackID]critpath.TermID{}, sites: map[string]int32{}}
}

// stack returns the cached information of a stack (small enough to be
// inlined when computed before: a few calls per record).
func (t *terms) stack(id tracein.StackID) *stackInfo {
	if int(id) < len(t.info) && t.info[id].computed {
		return &t.info[id]
	}
	return t.newStack(id)
}

// newStack is stack for a stack not computed before.
func (t *terms) newStack(id tracein.StackID) *stackInfo {
	for int(id) >= len(t.info) {
		t.info = append(t.info, stackInfo{})
	}
	si := &t.info[id]
	if si.computed {
		return si
	}
	si.computed = true
	t.funcs, t.files = t.funcs[:0], t.files[:0]
	t.apps = t.apps[:0]
	frames := t.stacks.Frames(id)
	for _, f := range frames {
		t.funcs = append(t.funcs, f.Func)
		t.files = append(t.files, f.File)
	}
	si.attr = t.rules.DecideFiles(t.funcs, t.files)
	prev := ""
	for _, f := range frames {
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
		case "sync.(*WaitGroup).Wait", "golang.org/x/sync/errgroup.(*Group).Wait":
			si.flags |= flagJoinAll
		case "google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams":
			si.flags |= flagRPCRead
		case "google.golang.org/grpc/internal/transport.(*loopyWriter).run":
			if n := len(frames); strings.HasPrefix(frames[n-1].Func, "google.golang.org/grpc/internal/transport.NewServerTransport") {
				si.flags |= flagRPCWrite
			}
		}
		if len(frames) == 1 || f.Func == frames[0].Func { // a start stack is the goroutine's function
			for _, p := range transportStart {
				if strings.HasPrefix(f.Func, p) {
					si.flags |= flagTransport
				}
			}
		}
		if t.rules.IsAppFrame(f.Func, f.File, si.attr.Fallback) {
			si.outerApp = f.Func
			if n := len(t.apps); n == 0 || t.apps[n-1] != f.Func {
				t.apps = append(t.apps, f.Func)
			}
		}
		prev = f.Func
	}
	if si.attr.App != "" {
		si.path, si.pathKey = t.internPath(si.attr.App)
	}
	si.handler, si.handlerDepth = si.outerApp, 0
	for i := len(frames) - 2; i >= 0; i-- { // outermost first; the innermost dispatch wins
		fn, caller := frames[i], frames[i+1]
		if (isDispatch(caller.Func) || strings.HasSuffix(fn.Func, ".ServeHTTP")) &&
			t.rules.IsAppFrame(fn.Func, fn.File, si.attr.Fallback) && !t.rules.IsAppFrame(caller.Func, caller.File, si.attr.Fallback) {
			si.handler = strings.TrimSuffix(fn.Func, "-fm")
			si.handlerDepth++
		}
	}
	if n := len(frames); n > 0 && isRPCStart(frames[n-1].Func) {
		si.flags |= flagRPC
		si.rpc = rpcMethod(frames, t.apps)
	}
	return si
}

// internPath returns the call path from the application frames in t.apps
// (leaf first), from the outermost down to app, shared between stacks.
func (t *terms) internPath(app string) ([]string, string) {
	i := slices.Index(t.apps, app)
	if i < 0 {
		i = 0
	}
	apps := t.apps[i:]
	path := make([]string, len(apps))
	for j, f := range apps {
		path[len(apps)-1-j] = f
	}
	key := pathKey(path)
	if p, ok := t.paths[key]; ok {
		return p, key
	}
	t.paths[key] = path
	return path, key
}

// term returns the TermID for a wait of kind k on stack id.
func (t *terms) term(id tracein.StackID, k frame.Kind) critpath.TermID {
	si := t.stack(id)
	if si.hasTerm && si.termKind == k {
		return si.termID
	}
	a := si.attr
	tid := t.intern(Term{Frame: a.App, Path: si.path, Mechanism: a.Mechanism, Kind: k, Fallback: a.Fallback}, si.pathKey)
	si.hasTerm, si.termKind, si.termID = true, k, tid
	return tid
}

// intern returns the TermID of tm, whose call path's key is pathKey.
func (t *terms) intern(tm Term, pathKey string) critpath.TermID {
	key := termKey{path: pathKey, mech: tm.Mechanism, kind: tm.Kind, fallback: tm.Fallback, beneath: tm.Beneath}
	tid, ok := t.index[key]
	if !ok {
		tid = critpath.TermID(len(t.list))
		t.list = append(t.list, tm)
		t.index[key] = tid
	}
	return tid
}

// BeneathMechanism is printed where a wait's mechanism would be for the
// CPU of a frame estimated from stacks (Term.Beneath).
const BeneathMechanism = "somewhere beneath"

// IsCPU reports whether the term is the CPU of an application frame (the
// running time spent beneath its call path) rather than a wait.
// (A JVM recording's lock holds are running too, with a mechanism.)
func (t Term) IsCPU() bool { return t.Kind == frame.Running && t.Mechanism == "" }

// Name returns a term's display name: "frame [mechanism, kind]".
func (t Term) Name() string {
	if t.Frame == "" {
		return t.NamedAs("(no app frame)")
	}
	return t.NamedAs(frame.Short(t.Frame))
}

// NamedAs returns "label [mechanism, kind]", for a label from Labels; the
// CPU of a frame estimated from stacks is "label [somewhere beneath,
// running]".
func (t Term) NamedAs(label string) string {
	var b strings.Builder
	b.WriteString(label)
	b.WriteString(" [")
	switch {
	case t.Mechanism != "":
		b.WriteString(frame.Short(t.Mechanism))
		b.WriteString(", ")
	case t.Beneath:
		b.WriteString(BeneathMechanism)
		b.WriteString(", ")
	}
	b.WriteString(t.Kind.String())
	b.WriteString("]")
	return b.String()
}
