package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// The go-plugin handshake. The host sets MagicCookieKey=MagicCookieValue in
// the plugin's environment; a plugin started without it was started by hand
// and says what it is instead of serving. The protocol version is
// adapter.ContractVersion: a host and a plugin built against different
// contracts refuse each other at start.
const (
	// MagicCookieKey is the environment variable the host sets.
	MagicCookieKey = "AIBOM_ADAPTER_PLUGIN"
	// MagicCookieValue is its value.
	MagicCookieValue = "aibom.dev/adapter-plugin: started by the aibom controller"
	// ProtocolVersion is the negotiated application protocol version.
	ProtocolVersion = adapter.ContractVersion
	// PluginName is the name the adapter is dispensed under.
	PluginName = "adapter"
)

// Handshake returns the go-plugin handshake of this protocol version.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// grpcPlugin is the go-plugin Plugin of the adapter service: the server side
// serves impl, the client side returns an *rpcClient.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	impl adapter.Adapter
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	registerServer(s, p.impl)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &rpcClient{cc: cc}, nil
}

// pluginSets returns the plugin sets by protocol version, for both sides.
func pluginSets(impl adapter.Adapter) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{ProtocolVersion: {PluginName: &grpcPlugin{impl: impl}}}
}

// Serve serves a as an adapter plugin and returns when the host stops the
// plugin. It is the whole main function of a plugin binary:
//
//	func main() { plugin.Serve(myadapter.New()) }
//
// Run by hand (the host's magic cookie is not in the environment), Serve
// prints the adapter's name, kinds and contract version and how to load the
// plugin to stderr, and exits with status 1.
func Serve(a adapter.Adapter) {
	if a == nil {
		fmt.Fprintln(os.Stderr, "plugin.Serve: nil adapter")
		os.Exit(1)
	}
	if os.Getenv(MagicCookieKey) != MagicCookieValue {
		Describe(os.Stderr, filepath.Base(os.Args[0]), a)
		os.Exit(1)
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: pluginSets(a),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, serverOptions()...)...)
		},
		// go-plugin's default logs at trace level; the host forwards these
		// lines to its own logger.
		Logger: hclog.New(&hclog.LoggerOptions{Name: a.Name(), Level: hclog.Info, Output: os.Stderr, JSONFormat: true}),
	})
}

// Describe writes what a plugin binary is: the adapter's name, contract
// version and kinds (with any declaration error), and how to load it. Serve
// prints it when the binary is run by hand.
func Describe(w io.Writer, binary string, a adapter.Adapter) {
	fmt.Fprintf(w, "%s is an aibom adapter plugin: the aibom controller starts it, it is not meant to be run by hand.\n\n", binary)
	fmt.Fprintf(w, "  adapter:   %s\n", a.Name())
	fmt.Fprintf(w, "  contract:  adapter contract version %d (github.com/aibom-dev/aibom/pkg/adapter), go-plugin gRPC protocol version %d\n",
		adapter.ContractVersion, ProtocolVersion)
	fmt.Fprintf(w, "  kinds:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var problems []string
	for _, k := range a.Kinds() {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t(%s)\n", k.String(), k.Role, strings.Join(k.Versions, ","), k.Resource)
		if err := k.Validate(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	_ = tw.Flush()
	for _, p := range problems {
		fmt.Fprintf(w, "  warning: %s (the controller will refuse this plugin)\n", p)
	}
	fmt.Fprintf(w, "\nLoad it with:\n")
	fmt.Fprintf(w, "  aibom-controller --adapter-plugin /path/to/%s\n", binary)
	fmt.Fprintf(w, "or put it in a directory and start the controller with --adapter-plugin-dir DIR.\n")
	fmt.Fprintf(w, "(The controller sets %s in the plugin's environment; without it the plugin only prints this.)\n", MagicCookieKey)
}
