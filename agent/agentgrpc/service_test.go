package agentgrpc

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/latscope/latscope/agent"
)

// The test service: a hand-written service description in the shape
// protoc-gen-go-grpc generates, with wrapperspb messages, so that the test
// needs no generated code. Get is unary, List server-streaming (Pages
// pages), Echo bidirectional.

const (
	getMethod  = "/latscope.test.Items/Get"
	listMethod = "/latscope.test.Items/List"
	echoMethod = "/latscope.test.Items/Echo"
)

type itemsService interface {
	Get(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	List(*wrapperspb.StringValue, grpc.ServerStream) error
	Echo(grpc.ServerStream) error
}

var itemsDesc = grpc.ServiceDesc{
	ServiceName: "latscope.test.Items",
	HandlerType: (*itemsService)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Get", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		if ic == nil {
			return srv.(itemsService).Get(ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: getMethod}
		return ic(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return srv.(itemsService).Get(ctx, req.(*wrapperspb.StringValue))
		})
	}}},
	Streams: []grpc.StreamDesc{
		{StreamName: "List", ServerStreams: true, Handler: func(srv any, stream grpc.ServerStream) error {
			in := new(wrapperspb.StringValue)
			if err := stream.RecvMsg(in); err != nil {
				return err
			}
			return srv.(itemsService).List(in, stream)
		}},
		{StreamName: "Echo", ServerStreams: true, ClientStreams: true, Handler: func(srv any, stream grpc.ServerStream) error {
			return srv.(itemsService).Echo(stream)
		}},
	},
}

// items serves the test service; each method calls Seen with the context
// its handler got, and sleeps Cost (Get), PageCost per page (List).
type items struct {
	Cost, PageCost time.Duration
	Pages          int
	Seen           func(method string, ctx context.Context)
}

func (s *items) seen(m string, ctx context.Context) {
	if s.Seen != nil {
		s.Seen(m, ctx)
	}
}

func (s *items) Get(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	s.seen(getMethod, ctx)
	time.Sleep(s.Cost)
	return wrapperspb.String("item " + in.GetValue()), nil
}

func (s *items) List(in *wrapperspb.StringValue, stream grpc.ServerStream) error {
	s.seen(listMethod, stream.Context())
	for i := range s.Pages {
		time.Sleep(s.PageCost)
		if err := stream.SendMsg(wrapperspb.Int64(int64(i))); err != nil {
			return err
		}
	}
	return nil
}

func (s *items) Echo(stream grpc.ServerStream) error {
	s.seen(echoMethod, stream.Context())
	for {
		in := new(wrapperspb.StringValue)
		if err := stream.RecvMsg(in); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := stream.SendMsg(in); err != nil {
			return err
		}
	}
}

// serve starts a grpc-go server on loopback with the agent's server
// interceptors (unless a is nil) and returns a client connection with the
// client interceptors (unless plainClient).
func serve(t testing.TB, a *agent.Agent, svc *items, plainClient bool) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if a != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(UnaryServer(a)), grpc.ChainStreamInterceptor(StreamServer(a)))
	}
	s := grpc.NewServer(opts...)
	s.RegisterService(&itemsDesc, svc)
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	copts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if !plainClient {
		copts = append(copts, grpc.WithChainUnaryInterceptor(UnaryClient()), grpc.WithChainStreamInterceptor(StreamClient()))
	}
	cc, err := grpc.NewClient(ln.Addr().String(), copts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// callGet makes one Get.
func callGet(ctx context.Context, cc *grpc.ClientConn) error {
	return cc.Invoke(ctx, getMethod, wrapperspb.String("42"), new(wrapperspb.StringValue))
}

// callList reads a whole List stream and returns the pages read.
func callList(ctx context.Context, cc *grpc.ClientConn) (int, error) {
	st, err := cc.NewStream(ctx, &itemsDesc.Streams[0], listMethod)
	if err != nil {
		return 0, err
	}
	if err := st.SendMsg(wrapperspb.String("all")); err != nil {
		return 0, err
	}
	if err := st.CloseSend(); err != nil {
		return 0, err
	}
	for n := 0; ; n++ {
		if err := st.RecvMsg(new(wrapperspb.Int64Value)); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
}

// callEcho sends n messages on an Echo stream, reading each back, then
// closes it and reads its end.
func callEcho(ctx context.Context, cc *grpc.ClientConn, n int) error {
	st, err := cc.NewStream(ctx, &itemsDesc.Streams[1], echoMethod)
	if err != nil {
		return err
	}
	for i := range n {
		if err := st.SendMsg(wrapperspb.String(string(rune('a' + i)))); err != nil {
			return err
		}
		if err := st.RecvMsg(new(wrapperspb.StringValue)); err != nil {
			return err
		}
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	if err := st.RecvMsg(new(wrapperspb.StringValue)); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// withTraceParent returns ctx with tp in its outgoing metadata.
func withTraceParent(ctx context.Context, tp string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, traceParentKey, tp)
}
