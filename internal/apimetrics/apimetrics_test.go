package apimetrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

func TestResource(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/x/pods/y":                                  "pods",
		"/api/v1/namespaces/x/pods":                                    "pods",
		"/api/v1/pods":                                                 "pods",
		"/api/v1/namespaces/x/pods/y/status":                           "pods/status",
		"/apis/aibom.dev/v1alpha1/namespaces/x/aiboms/y/status":        "aiboms/status",
		"/apis/aibom.dev/v1alpha1/namespaces/x/aiboms/y":               "aiboms",
		"/apis/aibom.dev/v1alpha1/aiboms":                              "aiboms",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b":  "customresourcedefinitions",
		"/apis/coordination.k8s.io/v1/namespaces/x/leases/aibom":       "leases",
		"/apis/nvidia.com/v1beta1/namespaces/x/dynamographdeployments": "dynamographdeployments",
		"/api/v1/namespaces":                                           "namespaces",
		"/api/v1/namespaces/x":                                         "namespaces",
		"/api/v1/namespaces/x/status":                                  "namespaces/status",
		"/api":                                                         "discovery",
		"/api/v1":                                                      "discovery",
		"/apis":                                                        "discovery",
		"/apis/apps":                                                   "discovery",
		"/apis/apps/v1":                                                "discovery",
		"/":                                                            "discovery",
		"/version":                                                     "version",
		"/openapi/v3/apis/apps/v1":                                     "openapi",
	} {
		require.Equal(t, want, Resource(path), path)
	}
}

func TestVerb(t *testing.T) {
	for url, method := range map[string]string{
		"/api/v1/pods?watch=true&resourceVersion=1": VerbWatch,
		"/api/v1/pods?watch=1":                      VerbWatch,
		"/api/v1/pods?limit=500":                    http.MethodGet,
		"/api/v1/pods?watch=false":                  http.MethodGet,
	} {
		req := httptest.NewRequest(http.MethodGet, url, nil)
		require.Equal(t, method, Verb(req), url)
	}
	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		// A write is never a watch, whatever its query says.
		require.Equal(t, m, Verb(httptest.NewRequest(m, "/api/v1/pods?watch=true", nil)))
	}
}

// TestInstrumentCountsEveryClientOfTheConfig builds a real client-go
// clientset from an instrumented config against a fake API server and checks
// the counts, and that a WrapTransport already on the config still runs.
func TestInstrumentCountsEveryClientOfTheConfig(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods"):
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`))
		case r.Method == http.MethodGet:
			_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns"}}`))
		case r.Method == http.MethodDelete:
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer srv.Close()

	inner := 0
	cfg := &rest.Config{Host: srv.URL, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			inner++
			return rt.RoundTrip(r)
		})
	}}
	c := NewCounter()
	c.Instrument(cfg)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().Pods("ns").Delete(ctx, "p", metav1.DeleteOptions{}))
	// A clientset made later from the same config is counted too.
	cs2, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = cs2.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	require.Equal(t, 4, inner, "the config's own WrapTransport still runs")
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c.Collector()))
	require.Equal(t, map[string]float64{"GET pods": 3, "DELETE pods": 1}, gather(t, reg))
}

func TestDefaultIsOnTheManagersRegistry(t *testing.T) {
	Default.vec.WithLabelValues(http.MethodGet, "discovery").Inc()
	require.GreaterOrEqual(t, gather(t, metrics.Registry)["GET discovery"], 1.0)
}

// gather returns the counter's values by "verb resource".
func gather(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != MetricName {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["verb"]+" "+labels["resource"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
