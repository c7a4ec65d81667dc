package plugin

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// InProcess serves a through the plugin's gRPC service on an in-memory
// listener and returns the host side, a Client: the same service, codec,
// message limits and Client (timeouts, restarts) as Serve and Open, without
// a process or the go-plugin handshake. It is meant for tests: run the
// conformance suite over the transport with
//
//	c, err := plugin.InProcess(myadapter.New())
//	...
//	defer c.Close()
//	conformance.Run(t, conformance.NewHarness(c, fixtures...))
//
// A "restart" serves a again on a new listener.
func InProcess(a adapter.Adapter, opts ...Option) (*Client, error) {
	c := &Client{source: "in-process", o: newOptions(a.Name(), opts)}
	c.start = func() (*instance, error) { return startInProcess(a, c.o) }
	if err := c.open(); err != nil {
		return nil, err
	}
	return c, nil
}

func startInProcess(a adapter.Adapter, o options) (*instance, error) {
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(serverOptions()...)
	registerServer(srv, a)
	go func() { _ = srv.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///in-process",
		append(dialOptions(o.maxResponse),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		)...)
	if err != nil {
		srv.Stop()
		return nil, err
	}
	kill := func() {
		_ = cc.Close()
		srv.Stop()
	}
	return &instance{rpc: &rpcClient{cc: cc}, kill: kill, exited: func() bool { return false }}, nil
}
