package watch

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

var (
	watchHealthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "aibom_watch_healthy",
		Help: "1 while a registered kind is served and its watch is healthy, 0 otherwise.",
	}, []string{"kind"})

	watchErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_watch_errors_total",
		Help: "List and watch errors of a registered kind's informer, and failed probes.",
	}, []string{"kind"})
)

func init() { metrics.Registry.MustRegister(watchHealthy, watchErrors) }

func setHealth(e graph.Entry, healthy bool) {
	v := 0.0
	if healthy {
		v = 1
	}
	watchHealthy.WithLabelValues(e.Kind.String()).Set(v)
}
