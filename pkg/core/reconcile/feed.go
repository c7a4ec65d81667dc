package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// The feed connects the watches to the reconcile loop: the informers'
// events reach the event mapper, which enqueues requests on the controller's
// queue. The caches run on every replica, so that a follower is warm; the
// queue exists on the leader only, and until it is attached the feed drops
// what it is given (everything is replayed when it attaches).

// Warmup is what the controller's source needs from the watches: a bounded
// wait for their first sync, and a replay of everything they hold once the
// queue is attached (the Supervisor).
type Warmup interface {
	WaitForStartup(ctx context.Context)
	ReplayAll(ctx context.Context)
}

// Feed is the event mapper bound to the controller's queue: the Events the
// Supervisor sends what its informers see.
type Feed struct {
	Mapper *EventMapper
	Queue  *StandbyQueue
}

// NewFeed binds a reconciler and its event mapper through a new standby
// queue: the mapper's requests reach the reconciler's workers through it
// (once the controller attaches it), the reconciler resolves the mapping
// requests into it, and the mapper recognises the reconciler's own writes
// coming back.
func NewFeed(r *Reconciler, m *EventMapper) Feed {
	q := &StandbyQueue{}
	r.Mapper, r.Queue = m, q
	m.Written = &r.written
	return Feed{Mapper: m, Queue: q}
}

// Handler implements Events.
func (f Feed) Handler(ctx context.Context, e graph.Entry) toolscache.ResourceEventHandler {
	return f.Mapper.InformerHandler(ctx, e, f.Queue)
}

// Replay implements Events: every object through the event mapper, as a
// creation; for a tracked kind, the subjects of its AIBOMs too (an AIBOM
// whose workload went away while no cache of its kind ran gets no event).
// The generic roots of the namespaces it holds objects in are re-decided as
// well: one was the top of its chain because its owner's kind could not be
// read, and that kind reads now (its recovery), so its chain may go on to a
// tracked root that absorbs it.
func (f Feed) Replay(ctx context.Context, e graph.Entry, objs []client.Object) {
	f.Mapper.Replay(ctx, e, objs, f.Queue)
	f.Mapper.enqueueMissedDeletes(ctx, e, objs, f.Queue)
	if f.Mapper.Reader == nil {
		return
	}
	var namespaces map[string]bool
	if !e.Tracked() {
		if len(objs) == 0 {
			return // no object of the kind can own a generic root
		}
		namespaces = map[string]bool{}
		for _, o := range objs {
			namespaces[o.GetNamespace()] = true
		}
	}
	var aiboms v1alpha1.AIBOMList
	if err := f.Mapper.Reader.List(ctx, &aiboms); err != nil {
		log.FromContext(ctx).Error(err, "listing AIBOMs to replay a kind's subjects", "kind", e.Kind.String())
		return
	}
	for i := range aiboms.Items {
		a := &aiboms.Items[i]
		gk, ok := subjectGroupKind(a)
		if !ok {
			continue
		}
		switch {
		case gk == e.GroupKind() && e.Tracked():
			f.Mapper.enqueueSubject(a, f.Queue)
		case !f.Mapper.Registry.IsTracked(gk) && (namespaces == nil || namespaces[a.Namespace]):
			f.Mapper.enqueueSubject(a, f.Queue) // a generic root
		}
	}
}

// Reconcile implements Events.
func (f Feed) Reconcile(gk schema.GroupKind, namespace, name string) {
	f.Queue.Add(Request{GroupKind: gk, Namespace: namespace, Name: name})
}

// NamespaceChanged implements Events.
func (f Feed) NamespaceChanged(namespace string) { f.Mapper.NamespaceChanged(namespace, f.Queue) }

// Leading implements Events.
func (f Feed) Leading() bool { return f.Queue.Attached() }

// StandbyQueue forwards Add to the controller's queue once it is attached
// and drops requests before that. The event mapper checks Attached and calls
// Add only; the other methods of the interface are the attached queue's and
// must not be called before attach.
type StandbyQueue struct {
	queue // the attached queue; nil until attach
	mu    sync.RWMutex
	q     queue
	// startup is where the controller's start is (startupPhase): while the
	// workers wait for the watches' first sync, no request is resolved yet.
	startup atomic.Uint32
}

// startupPhase: where a StandbyQueue's controller is in its start.
const (
	// startupUnknown: no Source started it (a queue attached otherwise).
	startupUnknown uint32 = iota
	// startupWaiting: the source attached the queue and the workers wait
	// for the watches' first sync (Warmup.WaitForStartup).
	startupWaiting
	// startupDone: the workers run, or are about to.
	startupDone
)

// beforeWorkers reports whether the controller's workers have not started
// yet and will only start once every kind's cache synced or failed
// (startupSource.WaitForSync). Until then no request is resolved: an object
// added or replayed meanwhile needs no request for its descendants, which
// are in the caches too and map themselves upward once the workers run,
// with every owner readable (see EventMapper.OnAdd).
func (w *StandbyQueue) beforeWorkers() bool {
	return w.startup.Load() == startupWaiting
}

// attach sets the controller's queue; false if one was already attached.
func (w *StandbyQueue) attach(q queue) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.q != nil {
		return false
	}
	w.q, w.queue = q, q
	return true
}

// Attached reports whether the controller's queue is attached (this replica
// leads): before that, mapping an event to its root is wasted work.
func (w *StandbyQueue) Attached() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.q != nil
}

// Add enqueues r when the controller's queue is attached. A mapping request
// goes ahead of the workload reconciles (see MappingPriority).
func (w *StandbyQueue) Add(r Request) {
	w.mu.RLock()
	q := w.q
	w.mu.RUnlock()
	if q == nil {
		return
	}
	if pq, ok := q.(priorityAdder); ok && r.Op.resolvesInCache() {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(MappingPriority)}, r)
		return
	}
	q.Add(r)
}

// MappingPriority is the queue priority of the requests a worker resolves
// from the caches (OpRootOf, OpDescendants); workload
// reconciles, which write, have the default priority 0. Resolving the
// mapping first lets the reconciles it asks for join the ones already queued
// (the queue holds each request once) instead of running again after them:
// at a cold start, where every object of a chain is mapped at once, a root
// is reconciled once instead of once per level below it (1,000 Deployments
// with a ReplicaSet and a Pod each: ~1,550 reconciles fewer, each building
// a document only to find it unchanged). Mapping requests are bounded per
// event and cost cache lookups, so they cannot starve the reconciles.
const MappingPriority = 10

// priorityAdder is the part of controller-runtime's priority queue (the
// controller's default queue) that sets a request's priority.
type priorityAdder interface {
	AddWithOpts(o priorityqueue.AddOpts, items ...Request)
}

// Source returns the controller source through which the feed enqueues
// work. The controller starts it on the leader only: it attaches the queue,
// and the watches replay everything they already hold into it. Its workers
// start once the watches' first sync is over (Warmup.WaitForStartup).
func (w *StandbyQueue) Source(warm Warmup) source.TypedSource[Request] {
	replayed := make(chan struct{})
	return startupSource{TypedSource: source.TypedFunc[Request](func(ctx context.Context, q queue) error {
		if !w.attach(q) {
			close(replayed)
			return nil
		}
		// Unless WaitForSync already returned (the workers may run).
		w.startup.CompareAndSwap(startupUnknown, startupWaiting)
		go func() {
			defer close(replayed)
			warm.ReplayAll(ctx)
		}()
		return nil
	}), warm: warm, queue: w, replayed: replayed}
}

// startupSource holds the controller's workers back until the watches'
// first sync is over and what they held was replayed into the queue.
type startupSource struct {
	source.TypedSource[Request]
	warm  Warmup
	queue *StandbyQueue
	// replayed is closed once Warmup.ReplayAll returned.
	replayed chan struct{}
}

// replayWaitBound bounds how long the workers wait for ReplayAll after the
// watches' first sync: it waits for the namespaces' cache, which a
// controller that may not list namespaces never has.
const replayWaitBound = 10 * time.Second

// WaitForSync implements source.TypedSyncingSource. The controller starts
// its workers once it returns.
func (x startupSource) WaitForSync(ctx context.Context) error {
	x.warm.WaitForStartup(ctx)
	// The replay of the kinds synced when the queue was attached (a leader
	// that followed before holds every kind): its objects need no
	// descendants requests either while it runs before the workers.
	bound := time.NewTimer(replayWaitBound)
	defer bound.Stop()
	select {
	case <-x.replayed:
	case <-bound.C:
	case <-ctx.Done():
	}
	// Before the workers start: a kind that syncs from now on is replayed
	// with its descendants' requests (its children may have been resolved
	// while it could not be read).
	x.queue.startup.Store(startupDone)
	return nil
}
