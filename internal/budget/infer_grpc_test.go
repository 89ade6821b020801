package budget

import "testing"

// The names grpc-go's server and protoc-gen-go-grpc give the frames an RPC
// runs under (grpc-go v1.85.0's server.go; etcd's generated handlers).
func TestRPCFrames(t *testing.T) {
	for fn, want := range map[string]string{
		"go.etcd.io/etcd/api/v3/etcdserverpb._KV_Put_Handler":                            "/etcdserverpb.KV/Put",
		"go.etcd.io/etcd/api/v3/etcdserverpb._KV_Put_Handler.func1":                      "/etcdserverpb.KV/Put",
		"go.etcd.io/etcd/api/v3/etcdserverpb._Watch_Watch_Handler":                       "/etcdserverpb.Watch/Watch",
		"github.com/latscope/latscope/testdata/corpus/record/corpus._Items_List_Handler": "/corpus.Items/List",
		"example.com/pb._Foo_Bar_Baz_Handler":                                            "/pb.Foo_Bar/Baz",
		"main.itemsServer.Get":                                                           "",
		"example.com/pb._Handler":                                                        "",
		"example.com/pb._Foo_Handler":                                                    "",
		"example.com/pb._Foo_Bar_HandlerX":                                               "",
	} {
		if got := generatedMethod(fn); got != want {
			t.Errorf("generatedMethod(%q) = %q, want %q", fn, got, want)
		}
	}
	for fn, want := range map[string]bool{
		"google.golang.org/grpc.(*Server).serveStreams.func2.1": true,  // v1.61+
		"google.golang.org/grpc.(*Server).serveStreams.func1.1": true,  // older
		"google.golang.org/grpc.(*Server).serveStreams.func2":   false, // the reader's stream callback
		"google.golang.org/grpc.(*Server).serveStreams":         false,
		"google.golang.org/grpc.(*Server).serverWorker":         false, // NumStreamWorkers: not inferred
	} {
		if got := isRPCStart(fn); got != want {
			t.Errorf("isRPCStart(%q) = %v, want %v", fn, got, want)
		}
	}
	for fn, want := range map[string]bool{
		"main.init.func1": true, "main.main.RequestID.func3": true, "main.itemsServer.Get": false,
		"example.com/funcs.(*T).Get": false, "example.com/x.functional": false,
	} {
		if got := isClosure(fn); got != want {
			t.Errorf("isClosure(%q) = %v, want %v", fn, got, want)
		}
	}
}
