// Package corpus is the service description of the recorder's gRPC service,
// corpus.Items, written by hand exactly as protoc-gen-go-grpc generates it
// (named _Items_Get_Handler and _Items_List_Handler in the proto package's Go
// package), with wrapperspb messages, so a trace shows the frames a real
// generated service shows.
package corpus

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const (
	Items_Get_FullMethodName  = "/corpus.Items/Get"
	Items_List_FullMethodName = "/corpus.Items/List"
)

// ItemsServer is the server API for the Items service.
type ItemsServer interface {
	Get(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	List(*wrapperspb.StringValue, grpc.ServerStream) error
}

func _Items_Get_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(wrapperspb.StringValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(ItemsServer).Get(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: Items_Get_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(ItemsServer).Get(ctx, req.(*wrapperspb.StringValue))
	}
	return interceptor(ctx, in, info, handler)
}

func _Items_List_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(wrapperspb.StringValue)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(ItemsServer).List(m, stream)
}

// Items_ServiceDesc is the grpc.ServiceDesc for the Items service.
var Items_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "corpus.Items",
	HandlerType: (*ItemsServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Get", Handler: _Items_Get_Handler},
	},
	Streams: []grpc.StreamDesc{
		{StreamName: "List", Handler: _Items_List_Handler, ServerStreams: true},
	},
}
