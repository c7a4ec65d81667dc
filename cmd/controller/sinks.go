package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/aibom-dev/aibom/internal/configuration"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/sink"
)

// sinkOptions are the flags of the AIBOMConfig's sinks (docs/sinks.md).
type sinkOptions struct {
	namespace         string
	queueCapacity     int
	queueBytes        int64
	attemptTimeout    time.Duration
	maxBackoff        time.Duration
	maxElapsed        time.Duration
	redeliverInterval time.Duration
}

func (o *sinkOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.namespace, "controller-namespace", "", "Namespace of the controller: the only one whose Secrets sinks may name (default: $POD_NAMESPACE, else the service account's namespace, else aibom-system).")
	fs.IntVar(&o.queueCapacity, "sink-queue-capacity", sink.DefaultQueueCapacity, "Capacity of each sink's queue, in AIBOMs; an event offered to a full queue is refused, reported (SinkFailed=True, reason QueueFull) and delivered again later.")
	fs.Int64Var(&o.queueBytes, "sink-queue-bytes", sink.DefaultQueueBytes, "Bytes of documents the sinks' queues hold, all sinks together (the default fits the chart's 512Mi limit); past it a document still in its AIBOM's status waits as a reference and is read again at its turn, any other is refused (SinkFailed=True, reason QueueFull) and delivered again later.")
	fs.DurationVar(&o.attemptTimeout, "sink-attempt-timeout", sink.DefaultAttemptTimeout, "Deadline of one delivery attempt to a sink.")
	fs.DurationVar(&o.maxBackoff, "sink-max-backoff", sink.DefaultMaxBackoff, "Longest wait between attempts after transient failures (exponential from 1s).")
	fs.DurationVar(&o.maxElapsed, "sink-max-elapsed", sink.DefaultMaxElapsed, "How long a delivery is retried before it is reported failed (it is delivered again by the next redelivery pass).")
	fs.DurationVar(&o.redeliverInterval, "sink-redeliver-interval", time.Minute, "How often documents a sink does not hold (failed, refused at a full queue, or interrupted by a restart) are offered again.")
}

func (o *sinkOptions) options(maxDocBytes int, _ []adapter.Adapter) configuration.Options {
	ns := o.namespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if ns == "" {
		ns = "aibom-system"
	}
	return configuration.Options{
		Namespace: ns,
		Defaults:  reconcile.Config{NamespaceSelector: graph.DefaultNamespaceSelector(), MaxDocumentBytes: maxDocBytes},
		Delivery: sink.Options{QueueCapacity: o.queueCapacity, QueueBytes: o.queueBytes, AttemptTimeout: o.attemptTimeout,
			MaxBackoff: o.maxBackoff, MaxElapsed: o.maxElapsed},
		RedeliverInterval: o.redeliverInterval,
	}
}
