package reconcile

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// The periodic re-verification is the last safety net: every interval, every
// tracked workload of an opted-in namespace and the subject of every AIBOM
// is reconciled again, as if an event had been lost. It reads only the
// caches; a reconcile whose inputs and stored status are what the controller
// last wrote or verified writes nothing (and reads nothing from the API
// server, except the live lists of get/list-only kinds a root's closure
// reaches). Enqueues are paced (at most Rate per second), so that a pass
// never floods the queue ahead of real events.

var (
	resyncPasses = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "aibom_resync_passes_total",
		Help: "Periodic re-verification passes started (every tracked workload and AIBOM subject re-enqueued).",
	})
	resyncEnqueued = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "aibom_resync_enqueued_total",
		Help: "Workloads enqueued by the periodic re-verification.",
	})
)

func init() { metrics.Registry.MustRegister(resyncPasses, resyncEnqueued) }

// DefaultResyncInterval is the default period of the re-verification.
const DefaultResyncInterval = 10 * time.Minute

// DefaultResyncRate is the default pace of a pass, in enqueues per second.
const DefaultResyncRate = 100

// Resync enqueues, paced at ratePerSecond (DefaultResyncRate when <= 0),
// every tracked workload of an opted-in namespace the caches hold and the
// subject of every AIBOM, and returns how many it enqueued. It does nothing
// on a replica that does not lead.
func (r *Reconciler) Resync(ctx context.Context, ratePerSecond float64) int {
	if !r.leading() {
		return 0
	}
	if ratePerSecond <= 0 {
		ratePerSecond = DefaultResyncRate
	}
	resyncPasses.Inc()
	r.recordCoverage(ctx)
	// Clean-up by invariant (sweep.go): orphans and AIBOMs the controller
	// did not write, from the cache, before every subject is re-verified.
	if sw := r.Sweep(ctx); sw.Orphans+sw.Marked+sw.Deleted > 0 {
		log.FromContext(ctx).Info("re-verification: swept AIBOMs", "orphans", sw.Orphans, "foreign", sw.Foreign, "marked", sw.Marked, "deleted", sw.Deleted)
	}
	seen := map[Request]bool{}
	var reqs []Request
	add := func(r Request) {
		if !seen[r] {
			seen[r] = true
			reqs = append(reqs, r)
		}
	}
	for _, e := range r.Registry.TrackedEntries() {
		objs, err := r.Store.InNamespace(ctx, e, metav1.NamespaceAll)
		if err != nil {
			continue // unreadable now: its sync or recovery replays it
		}
		for _, o := range objs {
			if r.Mapper == nil || r.Mapper.optedIn(o.GetNamespace()) {
				add(Request{GroupKind: e.GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()})
			}
		}
	}
	if r.Mapper != nil && r.Mapper.Reader != nil {
		var aiboms v1alpha1.AIBOMList
		if err := r.Mapper.Reader.List(ctx, &aiboms); err != nil {
			log.FromContext(ctx).Error(err, "re-verification: listing AIBOMs")
		}
		for i := range aiboms.Items {
			if req, ok := r.Mapper.subjectRequest(&aiboms.Items[i]); ok {
				add(req)
			}
		}
	}
	if r.Mapper != nil {
		r.Mapper.enqueueGenericCandidates(ctx, metav1.NamespaceAll, adderFunc(add))
	}
	limiter := rate.NewLimiter(rate.Limit(ratePerSecond), max(1, int(ratePerSecond/10)))
	n := 0
	for _, req := range reqs {
		if limiter.Wait(ctx) != nil {
			break
		}
		r.Queue.Add(req)
		n++
	}
	resyncEnqueued.Add(float64(n))
	return n
}

// leading reports whether the reconciler's queue receives requests (this
// replica leads).
func (r *Reconciler) leading() bool {
	if sq, ok := r.Queue.(*StandbyQueue); ok {
		return sq.Attached()
	}
	return r.Queue != nil
}

// ResyncLoop runs the Reconciler's Resync every Interval on the leader, at
// Rate enqueues per second (DefaultResyncRate when <= 0).
type ResyncLoop struct {
	Reconciler *Reconciler
	Log        logr.Logger
	Interval   time.Duration
	Rate       float64
}

// NeedLeaderElection: only the leader reconciles.
func (l ResyncLoop) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (l ResyncLoop) Start(ctx context.Context) error {
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			start := time.Now()
			n := l.Reconciler.Resync(ctx, l.Rate)
			l.Log.V(1).Info("re-verification pass enqueued", "workloads", n, "took", time.Since(start).Round(time.Millisecond))
		}
	}
}

// adderFunc adapts a function to the queue's Add.
type adderFunc func(Request)

func (f adderFunc) Add(r Request) { f(r) }
