// Command otherversion is a plugin for the host's tests that completes the
// go-plugin handshake with the right magic cookie but another protocol
// version than this module's: a plugin built against a future contract.
package main

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

type futurePlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (futurePlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error { return nil }

func (futurePlugin) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	const future = plugin.ProtocolVersion + 1
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  future,
			MagicCookieKey:   plugin.MagicCookieKey,
			MagicCookieValue: plugin.MagicCookieValue,
		},
		VersionedPlugins: map[int]goplugin.PluginSet{future: {plugin.PluginName: futurePlugin{}}},
		GRPCServer:       goplugin.DefaultGRPCServer,
	})
}
