// Package plugin serves an adapter (package adapter) from its own binary
// and loads such binaries into the controller, over hashicorp/go-plugin's
// gRPC protocol. The adapter interface is the same in tree and out:
//
//	// the plugin's main
//	func main() { plugin.Serve(myadapter.New()) }
//
//	// the host
//	c, err := plugin.Open("/plugins/myadapter") // a *Client: an adapter.Adapter and an io.Closer
//	registry, err := graph.NewRegistry(append(inTree, c)...)
//	defer plugin.CleanupClients()
//
// # Protocol
//
// go-plugin starts the binary with a magic cookie (MagicCookieKey) in its
// environment and negotiates the protocol version, which is
// adapter.ContractVersion: a plugin built against another contract is
// refused at start. A binary run by hand, without the cookie, prints what it
// is (Describe) and exits with status 1.
//
// The service, ServiceName, has two unary methods, Info (the adapter's name,
// kinds and contract version, fetched once at start) and Scrape (one object
// as JSON in, findings or the adapter's error out). Messages are JSON, with
// the gRPC codec CodecName, up to MaxMessageBytes each way; no protoc and no
// generated code. docs/plugins.md gives the message schemas and the reasons.
//
// # Host behaviour
//
// A Client caches the name and kinds, and bounds every Scrape with a
// timeout (ScrapeTimeout, default 10s). A plugin that crashes, or does not
// answer in time, is killed and restarted on a later call, after a capped
// exponential backoff (Backoff); meanwhile Scrape fails at once with an
// error that says the plugin is down and when it is restarted. An adapter's
// own error travels in the response and is returned as the adapter wrote
// it; a panic in the plugin's adapter is an error, as in process.
//
// # Limits
//
// The host guards what it starts and what a plugin costs it (see
// docs/plugins.md, "Security"): before every start the file must be a
// regular executable file, not a symbolic link, owned by root or the
// controller's user, and not group- or world-writable; SHA256 pins its
// checksum (go-plugin's SecureConfig). Responses are capped
// (MaxResponseBytes, default 4 MiB) before they are read. The plugin's
// stderr is logged redacted, escaped, cut to MaxStderrLineBytes and
// rate-limited (StderrRate); its findings and errors are redacted again.
//
// InProcess serves an adapter through the same service and Client over an
// in-memory listener, without a process: tests use it to run the
// conformance suite over the transport.
package plugin
