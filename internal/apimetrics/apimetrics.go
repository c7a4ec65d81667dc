// Package apimetrics counts every request the controller issues to the API
// server, by verb and resource, as the Prometheus counter
// aibom_api_requests_total{verb,resource} on controller-runtime's metrics
// registry. It wraps the transport of a rest.Config, so that every client
// built from that config (the manager's client and caches, the supervisor's
// per-kind caches, discovery and probes, leader election, Events) is counted.
package apimetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MetricName is the name of the counter.
const MetricName = "aibom_api_requests_total"

// Verb values besides the HTTP methods.
const (
	// VerbWatch is a GET with ?watch=true (or watch=1).
	VerbWatch = "WATCH"
)

// Counter counts API requests by verb and resource.
type Counter struct {
	vec *prometheus.CounterVec
}

// NewCounter returns an unregistered counter (tests; Default is the
// registered one).
func NewCounter() *Counter {
	return &Counter{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricName,
		Help: "API requests issued by the controller, by verb (HTTP method, or WATCH) and resource (plural[/subresource], discovery, or the first path segment of a non-resource path).",
	}, []string{"verb", "resource"})}
}

// Collector is the counter as a Prometheus collector.
func (c *Counter) Collector() prometheus.Collector { return c.vec }

// Default is registered on controller-runtime's metrics registry, which the
// manager's metrics endpoint serves.
var Default = NewCounter()

func init() {
	metrics.Registry.MustRegister(Default.vec)
}

// Instrument makes every client built from cfg count its requests on c. An
// existing WrapTransport is kept (it runs closer to the wire). Call it before
// building the manager or any client from cfg.
func (c *Counter) Instrument(cfg *rest.Config) {
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return c.Wrap(rt)
	}
}

// Wrap returns a round tripper that counts each request, then sends it
// through rt. It has the signature of rest.Config.WrapTransport.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{counter: c, next: rt}
}

type roundTripper struct {
	counter *Counter
	next    http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.counter.vec.WithLabelValues(Verb(req), Resource(req.URL.Path)).Inc()
	return r.next.RoundTrip(req)
}

// Verb is the request's HTTP method, or WATCH for a watch.
func Verb(req *http.Request) string {
	if req.Method == http.MethodGet && req.URL != nil {
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			return VerbWatch
		}
	}
	return req.Method
}

// Resource reduces an API path to its resource and subresource, so that the
// label has a value per kind, not per object:
//
//	/api/v1/namespaces/x/pods/y                         -> pods
//	/apis/aibom.dev/v1alpha1/namespaces/x/aiboms/y/status -> aiboms/status
//	/api/v1/namespaces/x                                -> namespaces
//	/apis/apps/v1 (and /api, /apis, /apis/apps)         -> discovery
//	/version, /openapi/v3/...                           -> version, openapi
func Resource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		parts = parts[min(2, len(parts)):] // api, version
	case "apis":
		parts = parts[min(3, len(parts)):] // apis, group, version
	case "":
		return "discovery"
	default:
		return parts[0]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			return "namespaces" // the namespace object itself
		}
		if len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize") {
			return "namespaces/" + parts[2] // no resource has these names
		}
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "discovery"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}
