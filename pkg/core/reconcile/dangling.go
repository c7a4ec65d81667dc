package reconcile

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// DefaultDanglingGrace is how long an object whose controller owner is gone
// while its reference remains waits before it is decided a root: the garbage
// collector deletes the dependents of a background deletion within seconds,
// and orphaning removes the reference (a root at once). But the collector
// learns of a new CustomResourceDefinition only at its next discovery (every
// 30 s), so an owner of a just-installed kind deleted at once leaves its
// children for up to that long, and a large deletion on a busy cluster takes
// longer still: a minute covers both.
const DefaultDanglingGrace = time.Minute

// OutcomeOwnerGone: the workload's controller reference names an owner that
// is gone (or re-created), and it waits for the garbage collector (see
// DanglingGrace) before it reports on its own; its AIBOM, if any, is kept.
const OutcomeOwnerGone = "owner_gone_waiting"

var danglingWaits = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "aibom_owner_gone_waits_total",
	Help: "Objects whose controller owner was gone (not found, or re-created with another UID) while the reference remained, and that waited the dangling-owner grace for the garbage collector before being decided a root, by the object's kind and how the wait ended: collected (deleted or orphaned within the grace) or expired (decided a root).",
}, []string{"kind", "end"})

func init() { metrics.Registry.MustRegister(danglingWaits) }

// errWaitDangling asks for the workload to be reconciled again after a
// while, without an error: a dangling controller reference in its grace.
type errWaitDangling struct{ after time.Duration }

func (e errWaitDangling) Error() string {
	return fmt.Sprintf("controller owner gone; waiting %s for the garbage collector", e.after)
}

// danglingSince records, per workload, when a reconcile first found its
// controller reference dangling (the start of its grace). An entry lives
// while the object does and its reference dangles: past the grace it stays,
// marked expired, so that the object is a root from then on without
// waiting again.
type danglingSince struct {
	mu    sync.Mutex
	since map[Request]danglingEntry
}

type danglingEntry struct {
	uid     types.UID
	at      time.Time
	expired bool
}

// danglingKey is the workload's key in danglingSince.
func danglingKey(gk schema.GroupKind, obj client.Object) Request {
	return Request{GroupKind: gk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// settleDangling decides a dangling walk (walk.Dangling) of obj: within the
// grace it returns the time left (wait > 0); past it, the walk settled
// (WalkResult.Settle). A walk that is not dangling ends the object's wait,
// if any, as collected (its reference was removed, or now resolves).
func (r *Reconciler) settleDangling(ctx context.Context, gk schema.GroupKind, obj client.Object, walk graph.WalkResult) (graph.WalkResult, time.Duration) {
	key := danglingKey(gk, obj)
	if !walk.Dangling() {
		r.danglingForget(key)
		return walk, 0
	}
	grace := r.DanglingGrace
	if grace <= 0 {
		return walk.Settle(), 0
	}
	if obj.GetDeletionTimestamp() != nil {
		// Being deleted (a pod its kubelet has not confirmed gone, an
		// object held by a finalizer): it goes, and never reports on its
		// own in the meantime, however long that takes.
		return walk, grace
	}
	now := r.now()
	r.dangling.mu.Lock()
	if r.dangling.since == nil {
		r.dangling.since = map[Request]danglingEntry{}
	}
	e, found := r.dangling.since[key]
	if !found || e.uid != obj.GetUID() {
		e = danglingEntry{uid: obj.GetUID(), at: now}
		r.dangling.since[key] = e
		found = false
	}
	left := e.at.Add(grace).Sub(now)
	expiresNow := left <= 0 && !e.expired
	if expiresNow {
		e.expired = true
		r.dangling.since[key] = e
	}
	r.dangling.mu.Unlock()
	switch {
	case left > 0:
		if !found {
			log.FromContext(ctx).V(1).Info("controller owner gone while the reference remains; waiting for the garbage collector before reporting on its own",
				"ownerKind", walk.MissKind, "reason", walk.Reason, "grace", grace)
		}
		return walk, left
	case expiresNow:
		danglingWaits.WithLabelValues(gk.String(), "expired").Inc()
		log.FromContext(ctx).Info("controller owner still gone after the grace; deciding the workload's root without it",
			"ownerKind", walk.MissKind, "reason", walk.Reason, "grace", grace)
	}
	return walk.Settle(), 0
}

// danglingForget ends the wait of the workload key names, if any: within
// the grace it counts as collected (the garbage collector deleted the
// object or removed its reference in time).
func (r *Reconciler) danglingForget(key Request) {
	key = Request{GroupKind: key.GroupKind, Namespace: key.Namespace, Name: key.Name}
	r.dangling.mu.Lock()
	e, ok := r.dangling.since[key]
	if ok {
		delete(r.dangling.since, key)
	}
	r.dangling.mu.Unlock()
	if ok && !e.expired {
		danglingWaits.WithLabelValues(key.GroupKind.String(), "collected").Inc()
	}
}
