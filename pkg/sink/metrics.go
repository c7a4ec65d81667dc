package sink

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_sink_deliveries_total",
		Help: "Events delivered to a sink (op: write or delete), counted once per event however many attempts it took.",
	}, []string{"sink", "op"})
	failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_sink_failures_total",
		Help: "Events a sink did not take: reason QueueFull (refused at the full queue or over the byte budget), a permanent refusal, or retries exhausted (Timeout, Unreachable, HTTP<code>). Each is recorded in the AIBOM's status and delivered again later.",
	}, []string{"sink", "reason"})
	attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aibom_sink_attempts_total",
		Help: "Delivery attempts by result (ok, transient, permanent).",
	}, []string{"sink", "result"})
	queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "aibom_sink_queue_depth",
		Help: "Events waiting in a sink's queue (not counting the one being delivered).",
	}, []string{"sink"})
	queueBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "aibom_sink_queue_bytes",
		Help: "Bytes of documents the sinks' queues hold, all sinks together (a document queued for several sinks counts once); bounded by --sink-queue-bytes.",
	})
	latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "aibom_sink_delivery_duration_seconds",
		Help:    "Duration of one delivery attempt.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"sink"})
)

func init() {
	metrics.Registry.MustRegister(deliveries, failures, attempts, queueDepth, queueBytes, latency)
}
