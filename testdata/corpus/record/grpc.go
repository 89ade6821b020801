package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/testdata/corpus/record/corpus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// grpc-unary, grpc-stream, grpc-unary-notask: real grpc-go over loopback
// (insecure credentials), one ClientConn shared by the clients as services
// share it. The service is corpus.Items with a unary Get (8 ms lookup, a
// sleep) and a server-streaming List (5 pages, 2 ms each, a sleep before
// each Send). The service description is written by hand in the shape
// protoc-gen-go-grpc generates, with wrapperspb messages. With tasks, the
// server has a small interceptor of its own making a task per RPC named by
// the full method; grpc-unary-notask has none (zero config).

type itemsServer struct{}

func lookupItem(ctx context.Context) {
	defer svc.since("lookupItem", time.Now())
	time.Sleep(8 * time.Millisecond)
}

func nextPage(ctx context.Context) {
	defer svc.since("nextPage", time.Now())
	time.Sleep(2 * time.Millisecond)
}

func (itemsServer) Get(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	lookupItem(ctx)
	return wrapperspb.String("item " + in.GetValue()), nil
}

func (itemsServer) List(in *wrapperspb.StringValue, stream grpc.ServerStream) error {
	for i := range 5 {
		nextPage(stream.Context())
		if err := stream.SendMsg(wrapperspb.Int64(int64(i))); err != nil {
			return err
		}
	}
	return nil
}

type itemsService interface {
	Get(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	List(*wrapperspb.StringValue, grpc.ServerStream) error
}

var itemsDesc = grpc.ServiceDesc{
	ServiceName: "corpus.Items",
	HandlerType: (*itemsService)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Get", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		if ic == nil {
			return srv.(itemsService).Get(ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/corpus.Items/Get"}
		return ic(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return srv.(itemsService).Get(ctx, req.(*wrapperspb.StringValue))
		})
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "List", ServerStreams: true, Handler: func(srv any, stream grpc.ServerStream) error {
		in := new(wrapperspb.StringValue)
		if err := stream.RecvMsg(in); err != nil {
			return err
		}
		return srv.(itemsService).List(in, stream)
	}}},
}

// taskUnary and taskStream are the service's own interceptors: a trace
// task per RPC, named by the full method.
func taskUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, end := task(ctx, info.FullMethod)
	defer end()
	return h(ctx, req)
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s ctxStream) Context() context.Context { return s.ctx }

func taskStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, end := task(ss.Context(), info.FullMethod)
	defer end()
	return h(srv, ctxStream{ss, ctx})
}

// serveGRPC starts the server and dials it.
func serveGRPC(tasks bool, extra ...grpc.ServerOption) (*grpc.ClientConn, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	opts := extra
	if tasks {
		opts = append(opts, grpc.UnaryInterceptor(taskUnary), grpc.StreamInterceptor(taskStream))
	}
	s := grpc.NewServer(opts...)
	if tasks {
		s.RegisterService(&itemsDesc, itemsServer{})
	} else {
		// Zero config: the description as protoc-gen-go-grpc generates it
		// (named handlers in package corpus), as a real service has.
		s.RegisterService(&corpus.Items_ServiceDesc, itemsServer{})
	}
	go s.Serve(ln)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.Stop()
		return nil, nil, err
	}
	return cc, func() { cc.Close(); s.Stop() }, nil
}

func unaryClient(cc *grpc.ClientConn) func(context.Context) error {
	return func(ctx context.Context) error {
		out := new(wrapperspb.StringValue)
		return cc.Invoke(ctx, "/corpus.Items/Get", wrapperspb.String("42"), out)
	}
}

func streamClient(cc *grpc.ClientConn) func(context.Context) error {
	desc := &itemsDesc.Streams[0]
	return func(ctx context.Context) error {
		st, err := cc.NewStream(ctx, desc, "/corpus.Items/List")
		if err != nil {
			return err
		}
		if err := st.SendMsg(wrapperspb.String("all")); err != nil {
			return err
		}
		if err := st.CloseSend(); err != nil {
			return err
		}
		for {
			m := new(wrapperspb.Int64Value)
			if err := st.RecvMsg(m); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
}

var _ = trace.IsEnabled

func init() {
	register(&scenario{name: "grpc-unary", clients: 4, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 unary /corpus.Items/Get (8 ms lookup), the service's interceptor makes a task per RPC; 4 clients on one ClientConn",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "/corpus.Items/Get"
			t.Terms = []TermTruth{{Frame: "main.lookupItem", Kind: "sleep", ConfiguredMS: 8, Timer: "lookupItem", Critical: true}}
			cc, stop, err := serveGRPC(true)
			if err != nil {
				return nil, nil, err
			}
			return unaryClient(cc), stop, nil
		}})
	register(&scenario{name: "grpc-stream", clients: 2, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 server-streaming /corpus.Items/List (5 pages, 2 ms before each), task per RPC by interceptor; 2 clients on one ClientConn",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "/corpus.Items/List"
			t.Terms = []TermTruth{{Frame: "main.nextPage", Kind: "sleep", ConfiguredMS: 10, Timer: "nextPage", Times: 5, Critical: true,
				Note: "5 sleeps of 2 ms per RPC: measured_ms is 5 × the timer's mean per sleep"}}
			cc, stop, err := serveGRPC(true)
			if err != nil {
				return nil, nil, err
			}
			return streamClient(cc), stop, nil
		}})
	register(&scenario{name: "grpc-unary-notask", clients: 4, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 unary /corpus.Items/Get (8 ms lookup), zero config: no interceptor, no tasks, generated-style service description; 4 clients on one ClientConn",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "grpc /corpus.Items/Get"
			t.Note = "zero config: requests inferred from grpc-go's handler goroutines; no task, so no service-side timer around the request (server side empty)"
			t.Terms = []TermTruth{{Frame: "main.lookupItem", Kind: "sleep", ConfiguredMS: 8, Timer: "lookupItem", Critical: true}}
			cc, stop, err := serveGRPC(false)
			if err != nil {
				return nil, nil, err
			}
			return unaryClient(cc), stop, nil
		}})
	register(&scenario{name: "grpc-interceptors-notask", clients: 4, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 unary /corpus.Items/Get (8 ms lookup) behind a chain of two unary interceptors of the service's own (a counter and a deadline check, no tasks), as etcd's server has; zero config; 4 clients on one ClientConn",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "grpc /corpus.Items/Get"
			t.Note = "zero config behind interceptors: the method still comes from the generated handler (its closure _Items_Get_Handler.func1 is beneath the interceptors); no task, so no service-side timer around the request (server side empty)"
			t.Terms = []TermTruth{{Frame: "main.lookupItem", Kind: "sleep", ConfiguredMS: 8, Timer: "lookupItem", Critical: true}}
			cc, stop, err := serveGRPC(false, grpc.ChainUnaryInterceptor(countUnary, deadlineUnary))
			if err != nil {
				return nil, nil, err
			}
			return unaryClient(cc), stop, nil
		}})
	register(&scenario{name: "grpc-stream-notask", clients: 2, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 server-streaming /corpus.Items/List (5 pages, 2 ms before each), zero config: no interceptor, no tasks; 2 clients on one ClientConn",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "grpc /corpus.Items/List"
			t.Note = "zero config: requests inferred from grpc-go's handler goroutines; no task, so no service-side timer around the request (server side empty)"
			t.Terms = []TermTruth{{Frame: "main.nextPage", Kind: "sleep", ConfiguredMS: 10, Timer: "nextPage", Times: 5, Critical: true,
				Note: "5 sleeps of 2 ms per RPC: measured_ms is 5 × the timer's mean per sleep"}}
			cc, stop, err := serveGRPC(false)
			if err != nil {
				return nil, nil, err
			}
			return streamClient(cc), stop, nil
		}})
	register(&scenario{name: "grpc-http", clients: 4, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 unary /corpus.Items/Get (8 ms lookup) and, in the same process, a net/http status endpoint (3 ms); zero config; 4 clients, each alternating an RPC and a GET",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Note = "zero config, two kinds of request: each must be its own group (routes), the RPCs never hidden behind the HTTP requests (issue #32)"
			t.Terms = []TermTruth{
				{Frame: "main.lookupItem", Kind: "sleep", ConfiguredMS: 8, Timer: "lookupItem", Critical: true},
				{Frame: "main.statusPage", Kind: "sleep", ConfiguredMS: 3, Timer: "statusPage", Critical: true},
			}
			cc, stop, err := serveGRPC(false)
			if err != nil {
				return nil, nil, err
			}
			t.ClientP99Note = "4 clients, a gRPC and an HTTP server share 2 cores: the client's p99 holds its own scheduling after the response, which no server-side measure sees; the HTTP route's p99 is checked against the service's timer around the handler (server_routes), the RPCs' logged"
			mux := http.NewServeMux()
			mux.HandleFunc("GET /status", statusPage)
			url, stopHTTP, err := serve(serverTimer(map[string]string{"/status": "http main.statusPage"})(mux))
			if err != nil {
				stop()
				return nil, nil, err
			}
			rpc, page := unaryClient(cc), get(url+"/status", false)
			var n atomic.Int64
			return func(ctx context.Context) error {
					if n.Add(1)%2 == 0 {
						return routed("grpc /corpus.Items/Get", ctx, rpc)
					}
					return routed("http main.statusPage", ctx, page)
				}, func() {
					stopHTTP()
					stop()
				}, nil
		}})
	register(&scenario{name: "grpc-http-tasks", clients: 4, warmup: 400 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "grpc-go v1.85.0 unary /corpus.Items/Get (8 ms lookup, no interceptor) and a net/http status endpoint (3 ms) with a task per request; 4 clients, each alternating an RPC and a GET",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Note = "tasks on the HTTP side only: the HTTP route is the one request type counted, and the RPCs (uncounted_rpcs: the client's completed in the window) must be said to run outside every request counted, never silently left out (issue #32)"
			t.ClientP99Note = "4 clients, a gRPC and an HTTP server share 2 cores: the client's p99 holds its own scheduling after the response; p99 is checked against the service's timer (the task)"
			t.Terms = []TermTruth{{Frame: "main.statusPage", Kind: "sleep", ConfiguredMS: 3, Timer: "statusPage", Critical: true}}
			cc, stop, err := serveGRPC(false)
			if err != nil {
				return nil, nil, err
			}
			mux := http.NewServeMux()
			mux.HandleFunc("GET /status", traced("GET /status", statusPage))
			url, stopHTTP, err := serve(mux)
			if err != nil {
				stop()
				return nil, nil, err
			}
			rpc, page := unaryClient(cc), get(url+"/status", false)
			var n atomic.Int64
			return func(ctx context.Context) error {
					if n.Add(1)%2 == 0 {
						return timedAs("uncounted", ctx, rpc)
					}
					return routed("GET /status", ctx, page)
				}, func() {
					stopHTTP()
					stop()
				}, nil
		}})
}

var rpcCount atomic.Int64

// countUnary and deadlineUnary are interceptors of the service's own that
// make no task: a counter, and a check that the caller's deadline leaves
// room for the work.
func countUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	rpcCount.Add(1)
	return h(ctx, req)
}

func deadlineUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < time.Millisecond {
		return nil, context.DeadlineExceeded
	}
	return h(ctx, req)
}

func statusPage(w http.ResponseWriter, r *http.Request) {
	begin := time.Now()
	time.Sleep(3 * time.Millisecond)
	svc.since("statusPage", begin)
	writeItem(w, "status", "ok")
}

// routed times one request of a service with several request types under
// "route:NAME" (Truth.Routes).
func routed(name string, ctx context.Context, do func(context.Context) error) error {
	return timedAs("route:"+name, ctx, do)
}

// timedAs times one client request under the timer key.
func timedAs(key string, ctx context.Context, do func(context.Context) error) error {
	begin := time.Now()
	err := do(ctx)
	if ctx.Err() == nil {
		svc.add(key, interval{begin: begin, end: time.Now(), err: err != nil})
	}
	return err
}
