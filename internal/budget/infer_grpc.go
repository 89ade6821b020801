package budget

import (
	"strings"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// Inferred gRPC requests (no runtime/trace tasks) follow grpc-go's server.
// Its transport reads each connection on one goroutine
// ((*http2Server).HandleStreams under (*Server).serveStreams); for every new
// stream (an RPC's HEADERS frame) it starts a goroutine, serveStreams'
// closure, that runs (*Server).handleStream → processRPC (processUnaryRPC or
// processStreamingRPC before v1.80) → the service's handler, queues the
// response and the status for the connection's writer goroutine (loopyWriter)
// and exits. That goroutine's life is one RPC's handler execution, unary or
// streaming, in every grpc-go version since 1.0 unless the server runs a
// worker pool (NumStreamWorkers, not inferred): its creation begins the
// request, its exit ends it. The RPC is named by its full method, from the
// generated handler's frame (_KV_Put_Handler in package etcdserverpb:
// /etcdserverpb.KV/Put), else by the service method's frame.
// docs/method.md §2.

// rpcState follows one grpc-go handler goroutine.
type rpcState struct {
	span *reqState // nil for an RPC in flight when the trace started
	name string    // the method, once a stack showed it
	gen  bool      // name came from a generated handler frame
}

// isRPCStart reports whether fn, a goroutine's outermost frame, is the
// closure grpc-go's server starts per stream (serveStreams.func1.1 before
// v1.61, func2.1 since).
func isRPCStart(fn string) bool {
	const p = "google.golang.org/grpc.(*Server).serveStreams.func"
	if !strings.HasPrefix(fn, p) {
		return false
	}
	return strings.Contains(fn[len(p):], ".") // a closure inside the stream callback, not the callback
}

// isDispatch reports whether fn calls a handler: a ServeHTTP method
// (net/http.HandlerFunc's, a router's, a middleware type's) or gin's Next.
func isDispatch(fn string) bool {
	return strings.HasSuffix(fn, ".ServeHTTP") || fn == "github.com/gin-gonic/gin.(*Context).Next"
}

// rpcMethod names the RPC of a handler goroutine's stack (frames leaf
// first; apps its application frames, leaf first): "/pkg.Svc/Method" from a
// generated _Svc_Method_Handler frame, else the outermost application frame
// that is not a closure (the service's method), else "".
func rpcMethod(frames []tracein.Frame, apps []string) string {
	for _, f := range frames {
		if m := generatedMethod(f.Func); m != "" {
			return m
		}
	}
	for i := len(apps) - 1; i >= 0; i-- {
		if !isClosure(apps[i]) {
			return frame.Short(apps[i])
		}
	}
	return ""
}

// generatedMethod returns "/pkg.Svc/Method" for protoc-gen-go-grpc's
// handler "path/pkg._Svc_Method_Handler" (or a closure in it), the proto
// package taken as the Go package's name.
func generatedMethod(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	pkg, name := fn[slash+1:slash+1+dot], fn[slash+1+dot+1:]
	if !strings.HasPrefix(name, "_") {
		return ""
	}
	end := strings.Index(name, "_Handler")
	if end < 1 || end+len("_Handler") < len(name) && name[end+len("_Handler")] != '.' {
		return ""
	}
	sm := name[1:end]
	us := strings.LastIndexByte(sm, '_')
	if us <= 0 || us == len(sm)-1 {
		return ""
	}
	return "/" + pkg + "." + sm[:us] + "/" + sm[us+1:]
}

func isClosure(fn string) bool {
	last := fn[strings.LastIndexByte(fn, '/')+1:]
	i := strings.Index(last, ".func")
	return i >= 0 && i+5 < len(last) && last[i+5] >= '0' && last[i+5] <= '9'
}

func rpcName(method string) string { return tracelog.RPCRequestPrefix + nameOr(method, "handler") }

// rpcCreated begins an RPC when grpc-go starts its handler goroutine.
func (a *Analyzer) rpcCreated(g *gstate, ev *tracein.Event) bool {
	if a.terms.stack(ev.Stack).flags&flagRPC == 0 || g.req != nil {
		return false
	}
	r := &reqState{begin: ev.Time, inferred: true}
	g.rpc = &rpcState{span: r}
	a.spans++
	a.inf.rpcBegan++
	a.join(g, r, ev.Time, -1, false)
	return true
}

// rpcSeen learns an RPC's method from a stack of its goroutine, and
// recognises a handler goroutine that was running when the trace started.
func (a *Analyzer) rpcSeen(g *gstate, st tracein.StackID) {
	if st == tracein.NoStack {
		return
	}
	si := a.terms.stack(st)
	if si.flags&flagRPC == 0 {
		return
	}
	if g.rpc == nil {
		if g.req != nil {
			return // adopted by a request (a handler goroutine started inside one)
		}
		g.rpc = &rpcState{} // in flight at the trace's start
	}
	if si.rpc != "" && (g.rpc.name == "" || !g.rpc.gen && strings.HasPrefix(si.rpc, "/")) {
		g.rpc.name, g.rpc.gen = si.rpc, strings.HasPrefix(si.rpc, "/")
	}
}

// rpcEnded ends the RPC of a handler goroutine that exits.
func (a *Analyzer) rpcEnded(g *gstate, t tracein.Time) {
	s := g.rpc
	g.rpc = nil
	if s.span == nil {
		a.inf.rpcCut(true, s.name)
		return
	}
	a.spans--
	a.inf.rpcEnded++
	s.span.name = rpcName(s.name)
	a.finish(s.span, t, g)
}

func (k *inferState) rpcCut(before bool, name string) {
	m := &k.rpcCutAfter
	if before {
		m = &k.rpcCutBefore
	}
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[name]++
}
