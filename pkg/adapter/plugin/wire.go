package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// The wire protocol: one gRPC service, two unary methods, messages encoded
// as JSON by a gRPC codec registered under CodecName (content type
// "application/grpc+aibom-json"). docs/plugins.md describes it for authors
// who write a plugin in another language.
const (
	// ServiceName is the fully qualified name of the gRPC service.
	ServiceName = "aibom.adapter.v1.Adapter"
	// CodecName is the gRPC content subtype of every message of the service.
	CodecName = "aibom-json"
	// MaxMessageBytes caps one message in either direction: large enough for
	// the largest Kubernetes object (etcd refuses values above 1.5 MiB by
	// default, but a JSON rendering with managed fields can be several times
	// that). The host accepts responses up to a smaller cap
	// (MaxResponseBytes, DefaultMaxResponseBytes): findings are a fraction
	// of the object they were read from.
	MaxMessageBytes = 64 << 20

	methodInfo   = "/" + ServiceName + "/Info"
	methodScrape = "/" + ServiceName + "/Scrape"
)

func init() { encoding.RegisterCodec(jsonCodec{}) }

// jsonCodec encodes the service's messages as JSON. Decoding preserves
// integers as int64 in objects (sigs.k8s.io/json), the way the core decodes
// objects from the API server.
type jsonCodec struct{}

func (jsonCodec) Name() string { return CodecName }

func (jsonCodec) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

func (jsonCodec) Unmarshal(data []byte, v any) error {
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, v)
}

// InfoRequest is the request of Info; it is empty.
type infoRequest struct{}

// infoResponse is what a plugin says about itself: the contract version it
// was built against, its adapter's name and the kinds it knows.
type infoResponse struct {
	ContractVersion int        `json:"contractVersion"`
	Name            string     `json:"name"`
	Kinds           []wireKind `json:"kinds"`
}

// wireKind is adapter.Kind on the wire.
type wireKind struct {
	Group    string   `json:"group,omitempty"`
	Kind     string   `json:"kind"`
	Resource string   `json:"resource"`
	Versions []string `json:"versions"`
	Role     string   `json:"role"`
	// PodOwners is adapter.Kind.PodOwners. Added within contract version 1:
	// a plugin built before it sends none, which means "not declared" (any
	// pod the closure reaches counts), exactly what it meant then.
	PodOwners []wireGroupKind `json:"podOwners,omitempty"`
	// ClusterScoped is adapter.Kind.ClusterScoped (referenced kinds only).
	ClusterScoped bool `json:"clusterScoped,omitempty"`
}

// wireGroupKind is a schema.GroupKind on the wire.
type wireGroupKind struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
}

func toWireKinds(kinds []adapter.Kind) []wireKind {
	out := make([]wireKind, 0, len(kinds))
	for _, k := range kinds {
		w := wireKind{Group: k.Group, Kind: k.Kind, Resource: k.Resource, Versions: k.Versions, Role: string(k.Role), ClusterScoped: k.ClusterScoped}
		for _, o := range k.PodOwners {
			w.PodOwners = append(w.PodOwners, wireGroupKind{Group: o.Group, Kind: o.Kind})
		}
		out = append(out, w)
	}
	return out
}

func fromWireKinds(kinds []wireKind) []adapter.Kind {
	out := make([]adapter.Kind, 0, len(kinds))
	for _, k := range kinds {
		a := adapter.Kind{Group: k.Group, Kind: k.Kind, Resource: k.Resource, Versions: k.Versions, Role: adapter.Role(k.Role), ClusterScoped: k.ClusterScoped}
		for _, o := range k.PodOwners {
			a.PodOwners = append(a.PodOwners, schema.GroupKind{Group: o.Group, Kind: o.Kind})
		}
		out = append(out, a)
	}
	return out
}

// scrapeRequest carries one object as JSON.
//
// References (added within contract version 1): the host resolves
// references on the plugin's behalf, in rounds. A host that can resolve sets
// ResolvesReferences and sends, in References, every reference the plugin
// asked for so far with its outcome. A plugin whose scrape looks up a
// reference the request does not carry answers with Needs instead of
// findings; the host resolves those and asks again, at most
// MaxReferenceRounds times; the last request sets Final, and the plugin then
// treats any reference still missing as unavailable. A host built before
// references sends neither field: every lookup is then unavailable (an
// unresolved finding). A plugin built before them never asks.
type scrapeRequest struct {
	Object             map[string]any  `json:"object"`
	ResolvesReferences bool            `json:"resolvesReferences,omitempty"`
	References         []wireReference `json:"references,omitempty"`
	Final              bool            `json:"final,omitempty"`
}

// wireReference is one reference and what the host found: the object (the
// adapter.ReferencedView of it) or the reason it is unresolved.
type wireReference struct {
	Reference  adapter.Reference `json:"reference"`
	Object     map[string]any    `json:"object,omitempty"`
	Unresolved string            `json:"unresolved,omitempty"`
	Message    string            `json:"message,omitempty"`
}

// scrapeResponse carries the adapter's findings, or its error. An error of
// the adapter travels in Error, so that a gRPC status error always means a
// transport fault (the plugin died, hung, or the message was too large).
// Needs, when not empty, replaces both: the references the scrape looked up
// that the request did not carry.
//
// Panicked (added within contract version 1) says Error is a panic of the
// adapter that plugin.Serve recovered, not an error it returned; a plugin
// built before it never sets it, and its panics read as errors.
type scrapeResponse struct {
	Findings adapter.Findings    `json:"findings"`
	Error    string              `json:"error,omitempty"`
	Needs    []adapter.Reference `json:"needs,omitempty"`
	Panicked bool                `json:"panicked,omitempty"`
}

// MaxReferenceRounds bounds the requests of one scrape: a scrape whose
// lookups depend on what earlier lookups returned needs one round per step.
const MaxReferenceRounds = 4

// adapterServer is the service's handler type.
type adapterServer interface {
	info(ctx context.Context, req *infoRequest) (*infoResponse, error)
	scrape(ctx context.Context, req *scrapeRequest) (*scrapeResponse, error)
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*adapterServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Info", Handler: infoHandler},
		{MethodName: "Scrape", Handler: scrapeHandler},
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "aibom adapter plugin protocol v1 (JSON codec " + CodecName + ")",
}

func infoHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(infoRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	h := func(ctx context.Context, req any) (any, error) {
		return srv.(adapterServer).info(ctx, req.(*infoRequest))
	}
	if interceptor == nil {
		return h(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodInfo}, h)
}

func scrapeHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(scrapeRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	h := func(ctx context.Context, req any) (any, error) {
		return srv.(adapterServer).scrape(ctx, req.(*scrapeRequest))
	}
	if interceptor == nil {
		return h(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodScrape}, h)
}

// server serves one adapter.
type server struct {
	a adapter.Adapter
}

func registerServer(s *grpc.Server, a adapter.Adapter) {
	s.RegisterService(&serviceDesc, &server{a: a})
}

func (s *server) info(context.Context, *infoRequest) (*infoResponse, error) {
	return &infoResponse{ContractVersion: adapter.ContractVersion, Name: s.a.Name(), Kinds: toWireKinds(s.a.Kinds())}, nil
}

func (s *server) scrape(ctx context.Context, req *scrapeRequest) (resp *scrapeResponse, err error) {
	// A panic would take the plugin process down with every scrape in
	// flight; the core turns an in-tree adapter's panic into an error, and
	// so does the plugin.
	defer func() {
		if p := recover(); p != nil {
			// The stack goes to stderr, which the host logs.
			fmt.Fprintf(os.Stderr, "adapter %s panicked: %v\n%s", s.a.Name(), p, debug.Stack())
			resp = &scrapeResponse{Error: fmt.Sprintf("adapter %s panicked: %v", s.a.Name(), p), Panicked: true}
			err = nil
		}
	}()
	obj := req.Object
	if obj == nil {
		obj = map[string]any{}
	}
	offered := newOfferedResolver(req)
	f, serr := s.a.Scrape(adapter.WithResolver(ctx, offered), &unstructured.Unstructured{Object: obj})
	if needs := offered.needs(); len(needs) > 0 {
		return &scrapeResponse{Needs: needs}, nil
	}
	resp = &scrapeResponse{Findings: f}
	if serr != nil {
		resp.Error = serr.Error()
		if resp.Error == "" {
			resp.Error = "adapter returned an error with an empty message"
		}
	}
	return resp, nil
}

// rpcClient calls the service on one connection.
type rpcClient struct {
	cc grpc.ClientConnInterface
}

func (c *rpcClient) info(ctx context.Context) (*infoResponse, error) {
	out := new(infoResponse)
	if err := c.cc.Invoke(ctx, methodInfo, &infoRequest{}, out, grpc.CallContentSubtype(CodecName)); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *rpcClient) scrape(ctx context.Context, req *scrapeRequest) (*scrapeResponse, error) {
	out := new(scrapeResponse)
	if err := c.cc.Invoke(ctx, methodScrape, req, out, grpc.CallContentSubtype(CodecName)); err != nil {
		return nil, err
	}
	return out, nil
}

// serverOptions are the options of every server of the service.
func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)}
}

// dialOptions are the options of every connection to the service. The
// host receives at most maxResponse bytes a message: gRPC refuses a larger
// one from its length prefix, before reading it into memory.
func dialOptions(maxResponse int) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponse), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}
