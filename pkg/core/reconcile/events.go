package reconcile

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

type queue = workqueue.TypedRateLimitingInterface[Request]

// adder is the part of a queue the event mapper uses.
type adder interface{ Add(Request) }

// EventMapper maps events on registered kinds, namespaces and AIBOMs to the
// tracked workloads they concern, in two halves:
//
//   - in the informers' handlers (OnAdd, OnUpdate, OnDelete, ForNamespaces,
//     ForAIBOMs) it only enqueues, in constant time per event, without a
//     read: the object itself when it is tracked, a request to find the root
//     above its controller owner (OpRootOf), and on a creation, a deletion,
//     an ownership or a UID change a request to re-evaluate its tracked
//     descendants (OpDescendants). Events of objects in namespaces that have
//     not opted in are dropped by the enqueue filter (Namespaces) and cost
//     nothing more;
//   - in the controller's workers (Process) it resolves those requests: one
//     ownership level per request, at most MaxWalkDepth hops (the walk's own
//     bound), each level cached by UID until an ownership change in its
//     namespace (RootCache). A chain of any length is resolved one queue item
//     at a time, interleaved with every other namespace's work.
type EventMapper struct {
	Registry *graph.Registry
	Store    graph.Store
	// Reader lists AIBOMs when a namespace opts in or out.
	Reader client.Reader
	// Namespaces is the enqueue filter; nil lets every event through.
	Namespaces NamespaceFilter
	// Written lets the AIBOM handler recognise the controller's own status
	// writes coming back; may be nil.
	Written *writeLog
	// Roots caches resolved ownership levels; may be nil.
	Roots *RootCache
	// References maps a referenced object to the roots that used it (see
	// references.go); may be nil.
	References *ReferenceIndex
}

// NamespaceFilter says which namespaces have opted in: the watches'
// NamespaceSet, which the caches follow too.
type NamespaceFilter interface {
	// OptedIn reports whether a namespace has opted in and its caches are
	// ready.
	OptedIn(namespace string) bool
	// Selects reports whether a namespace with these labels opts in under
	// the selector in force.
	Selects(nsLabels map[string]string) bool
}

// optedIn reports whether the filter lets a namespace's events through (all
// of them without a filter).
func (m EventMapper) optedIn(namespace string) bool {
	return m.Namespaces == nil || m.Namespaces.OptedIn(namespace)
}

// MapOp says what a Request asks of the worker.
type MapOp uint8

const (
	// OpReconcile reconciles the tracked workload the request names.
	OpReconcile MapOp = iota
	// OpRootOf finds the root above the object the request names (by kind,
	// namespace, name and UID): one ownership level, then either the
	// workload's reconcile or the next level's OpRootOf.
	OpRootOf
	// OpDescendants re-evaluates the tracked descendants of the object the
	// request names (which may be gone: only its kind, name and UID are
	// used).
	OpDescendants
	// OpNamespace re-evaluates every tracked workload and every AIBOM
	// subject of the request's namespace (its opt-in changed).
	OpNamespace
	// OpAIBOM checks one AIBOM (Namespace, Name) that is not named for its
	// subject: the controller did not write it (sweep.go).
	OpAIBOM
)

// resolvesInCache reports whether a worker resolves the request from the
// caches, without a write (a kind on the live-read fallback aside): one
// ownership level, or one object's descendants.
func (o MapOp) resolvesInCache() bool {
	return o == OpRootOf || o == OpDescendants
}

func (o MapOp) String() string {
	switch o {
	case OpRootOf:
		return "root_of"
	case OpDescendants:
		return "descendants"
	case OpNamespace:
		return "namespace"
	case OpAIBOM:
		return "aibom"
	default:
		return "reconcile"
	}
}

// maxLevels bounds the OpRootOf levels one event may climb: tracked owners of
// tracked owners, each level at most MaxWalkDepth hops. Real chains have a
// handful; a longer one is an ownerReference cycle too long for the walk's
// cycle check, which must not circulate in the queue forever.
const maxLevels = 4096

// OnAdd handles the creation of an object of a registered kind. A creation
// invalidates no cached level: levels that a new owner could change (owner
// not found) are never cached.
//
// Its descendants are re-evaluated too (they may have been resolved before
// it existed), except while the controller's workers wait for the watches'
// first sync (StandbyQueue.beforeWorkers): nothing is resolved before then,
// and every descendant, cached like the object, gets its own add or replay
// and is mapped upward once every kind reads. At a cold start that is every
// object's descendants request (3 of the 7 requests per Deployment with a
// ReplicaSet and a Pod).
func (m EventMapper) OnAdd(_ context.Context, e graph.Entry, obj client.Object, q adder) {
	sq, ok := q.(*StandbyQueue)
	m.enqueue(e, obj, !ok || !sq.beforeWorkers(), q)
}

// OnUpdate handles an update of an object of a registered kind.
func (m EventMapper) OnUpdate(_ context.Context, e graph.Entry, oldObj, newObj client.Object, q adder) {
	if oldObj.GetUID() != newObj.GetUID() {
		// Deleted and re-created under the same name, seen as one update
		// (a relist after a watch gap): the children of both objects are
		// re-walked, the stale ones become roots.
		m.Roots.invalidate(newObj.GetNamespace())
		m.enqueue(e, oldObj, true, q)
		m.enqueue(e, newObj, true, q)
		return
	}
	if !reflect.DeepEqual(oldObj.GetOwnerReferences(), newObj.GetOwnerReferences()) {
		m.Roots.invalidate(newObj.GetNamespace())
		m.enqueue(e, oldObj, false, q)
		m.enqueue(e, newObj, true, q)
		return
	}
	if m.relevantChange(e, oldObj, newObj) {
		m.enqueue(e, newObj, false, q)
	}
}

// OnDelete handles the deletion of an object of a registered kind.
func (m EventMapper) OnDelete(_ context.Context, e graph.Entry, obj client.Object, q adder) {
	m.Roots.invalidate(obj.GetNamespace())
	m.enqueue(e, obj, true, q)
}

// InformerHandler adapts the mapper to a client-go informer of one kind.
func (m EventMapper) InformerHandler(ctx context.Context, e graph.Entry, q adder) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok {
				m.OnAdd(ctx, e, o, q)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(client.Object)
			n, ok2 := newObj.(client.Object)
			if ok1 && ok2 {
				m.OnUpdate(ctx, e, o, n, q)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(client.Object); ok {
				m.OnDelete(ctx, e, o, q)
			}
		},
	}
}

// enqueue is the whole of an informer event's work: the object itself (when
// tracked), the root above its controller owner, and, withDescendants, its
// tracked descendants, as requests for the workers. No read, no walk.
func (m EventMapper) enqueue(e graph.Entry, obj client.Object, withDescendants bool, q adder) {
	if sq, ok := q.(*StandbyQueue); ok && !sq.Attached() {
		return // a follower: everything is replayed once it leads
	}
	if e.Role == adapter.RoleReferenced {
		// A referenced object is never walked: its change concerns the
		// roots that read it (an index lookup). Checked before the
		// namespace filter: a cluster-scoped kind has no namespace.
		m.enqueueReferrers(e, obj, q)
		return
	}
	ns := obj.GetNamespace()
	if !m.optedIn(ns) {
		return
	}
	if e.Tracked() {
		q.Add(Request{GroupKind: e.GroupKind(), Namespace: ns, Name: obj.GetName()})
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if gk := graph.RefGroupKind(ref); m.Registry.Registered(gk) {
			q.Add(Request{Op: OpRootOf, GroupKind: gk, Namespace: ns, Name: ref.Name, UID: ref.UID})
		} else if req, ok := m.unreadOwnerRequest(ref, ns); ok {
			q.Add(req)
		} else if !e.Tracked() {
			// Its controller is never an owner the walk passes (a Node
			// owning a mirror pod): a generic root candidate.
			q.Add(genericRequest(e, obj))
		}
	} else if !e.Tracked() {
		// Nothing controls it: a generic root candidate (a bare pod).
		q.Add(genericRequest(e, obj))
	}
	if withDescendants {
		q.Add(Request{Op: OpDescendants, GroupKind: e.GroupKind(), Namespace: ns, Name: obj.GetName(), UID: obj.GetUID()})
	}
}

// Process resolves a mapping request in a worker, adding what it maps to to
// q. It reports false for a workload reconcile (OpReconcile), which is not
// its to handle.
func (m EventMapper) Process(ctx context.Context, req Request, q adder) bool {
	switch req.Op {
	case OpRootOf:
		m.rootOf(ctx, req, q)
	case OpDescendants:
		m.descendants(ctx, req, q)
	case OpNamespace:
		m.enqueueNamespace(ctx, req.Namespace, q)
	default:
		return false
	}
	return true
}

// rootOf resolves one ownership level above the object req names: its
// nearest tracked owner (at most MaxWalkDepth hops, UID-checked) gets the
// next level's request; without one, the object is the root and is
// reconciled (when tracked).
func (m EventMapper) rootOf(ctx context.Context, req Request, q adder) {
	// Levels resolved before are followed here, map lookups only; the
	// first one not cached costs this item its reads.
	for {
		next, found := m.Roots.level(req.Namespace, req.UID)
		if !found {
			break
		}
		if next == nil || next.Op != OpRootOf {
			addLevel(next, req, q)
			return
		}
		if req.Level+1 >= maxLevels {
			return
		}
		n := *next
		n.Level = req.Level + 1
		req = n
	}
	entry, ok := m.Registry.Lookup(req.GroupKind)
	if !ok {
		return
	}
	epoch := m.Roots.epoch(req.Namespace)
	// The walk reads metadata only.
	obj, err := graph.GetMetadata(ctx, m.Store, entry, req.Namespace, req.Name)
	if (err == nil && obj.GetUID() != types.UID(req.UID)) || apierrors.IsNotFound(err) {
		// Gone (or re-created). An object read live raises no event of its
		// own: the root whose closure last passed through it is told.
		if root, ok := m.Roots.reachedFrom(req.UID); ok {
			q.Add(root)
		}
		return
	}
	if err != nil {
		// Unreadable now: its kind's sync or recovery replays it.
		return
	}
	setGVK(obj, entry)
	var next *Request
	walk := graph.Walker{Registry: m.Registry, Store: m.Store}.TrackedOwner(ctx, obj)
	switch {
	case walk.Owner != nil && !walk.Owner.Generic:
		next = &Request{Op: OpRootOf, GroupKind: walk.Owner.GroupKind, Namespace: walk.Owner.Namespace, Name: walk.Owner.Name, UID: types.UID(walk.Owner.UID)}
	case walk.Reason == graph.ReasonNotSynced && walk.Owner == nil:
		// Undecided: the owner kind's sync replays its objects, and with
		// them this level.
		return
	case walk.Owner != nil:
		// The top of the chain: the generic root is reconciled.
		next = &Request{GroupKind: walk.Owner.GroupKind, Namespace: walk.Owner.Namespace, Name: walk.Owner.Name, UID: types.UID(walk.Owner.UID)}
	case entry.Tracked():
		next = &Request{GroupKind: entry.GroupKind(), Namespace: req.Namespace, Name: req.Name}
	case walk.Dangling():
		// Its chain's owner is gone while the reference remains: the
		// candidate root (the topmost object read below the missing owner)
		// waits out its grace in the reconciler, and is decided then.
		r := genericRequest(entry, obj)
		if top := walk.Top(); top != nil {
			r = Request{GroupKind: top.GroupKind, Namespace: top.Namespace, Name: top.Name, UID: types.UID(top.UID)}
		}
		next = &r
	case graph.Walker{Registry: m.Registry, Store: m.Store}.IsGenericRoot(obj, walk):
		r := genericRequest(entry, obj)
		next = &r
	}
	if cacheable(walk) {
		m.Roots.remember(req.Namespace, req.UID, epoch, next)
	}
	addLevel(next, req, q)
}

// cacheable reports whether a level's outcome holds until an ownership
// change in its namespace (a deletion, an ownerReference or UID change): an
// owner found, or a walk that ended for a reason no creation can change. An
// owner not found yet (it may arrive) or a kind not readable yet (it may
// sync) is resolved again next time.
func cacheable(w graph.WalkResult) bool {
	if w.Owner != nil {
		return true
	}
	switch w.Reason {
	case graph.ReasonRoot, graph.ReasonUntrackedKind, graph.ReasonDepthCap, graph.ReasonCycle, graph.ReasonUIDMismatch:
		return true
	}
	return false
}

func addLevel(next *Request, from Request, q adder) {
	if next == nil {
		return
	}
	if next.Op == OpRootOf {
		if from.Level+1 >= maxLevels {
			return
		}
		next.Level = from.Level + 1
	}
	q.Add(*next)
}

// descendants enqueues the tracked descendants of the object req names.
func (m EventMapper) descendants(ctx context.Context, req Request, q adder) {
	entry, ok := m.Registry.Lookup(req.GroupKind)
	if !ok {
		return
	}
	// Only the kind, name and UID matter: the object may be gone.
	stub := &metav1.PartialObjectMetadata{}
	stub.SetGroupVersionKind(entry.GVK())
	stub.SetNamespace(req.Namespace)
	stub.SetName(req.Name)
	stub.SetUID(req.UID)
	desc, err := graph.Closure{Registry: m.Registry, Store: m.Store, TrackedOnly: true}.Descendants(ctx, stub)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing descendants for an event; they are re-evaluated on their own next event")
		return
	}
	for _, d := range desc.Tracked {
		q.Add(Request{GroupKind: d.GetObjectKind().GroupVersionKind().GroupKind(), Namespace: d.GetNamespace(), Name: d.GetName()})
	}
}

// relevantChange reports whether an update can change a document: for tracked
// kinds and generic owner kinds (whose roots are scraped whole) anything but
// status, for pods the running images and, where the pod is read whole (a
// root itself, or rolled up under a generic owner), its spec and
// annotations too; for other walk-only kinds nothing but ownership (handled
// by the caller).
func (m EventMapper) relevantChange(e graph.Entry, oldObj, newObj client.Object) bool {
	switch {
	case e.GroupKind() == graph.PodGroupKind:
		// Each side decoded once (the cache holds pods compact).
		oldU, newU := unstructuredOf(oldObj), unstructuredOf(newObj)
		if !reflect.DeepEqual(runningImages(oldU), runningImages(newU)) {
			return true
		}
		return m.Registry.PodReadWhole(metav1.GetControllerOfNoCopy(newObj)) && (oldObj.GetGeneration() != newObj.GetGeneration() ||
			!reflect.DeepEqual(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
			!reflect.DeepEqual(declaredImages(oldU), declaredImages(newU)))
	case e.Tracked(), e.Role == adapter.RoleReferenced, e.Generic():
		return oldObj.GetGeneration() != newObj.GetGeneration() ||
			!reflect.DeepEqual(oldObj.GetAnnotations(), newObj.GetAnnotations())
	default:
		return false
	}
}

// declaredImages lists a pod's containers by name and image, as its spec
// declares them (an image is the one mutable field of a pod's containers).
func declaredImages(u *unstructured.Unstructured) []any {
	return containerFields(u, "spec", []string{"initContainers", "containers"}, "name", "image")
}

// containerFields lists, for each entry of the pod's lists under section,
// the values of keys, in order.
func containerFields(u *unstructured.Unstructured, section string, lists []string, keys ...string) []any {
	if u == nil {
		return nil
	}
	var out []any
	for _, field := range lists {
		entries, _, _ := unstructured.NestedSlice(u.Object, section, field)
		for _, e := range entries {
			if m, ok := e.(map[string]any); ok {
				for _, k := range keys {
					out = append(out, m[k])
				}
			}
		}
	}
	return out
}

// unstructuredOf returns the map form of a cached object: the watches'
// compact form is decoded (a pod's few fields, a small object).
func unstructuredOf(obj client.Object) *unstructured.Unstructured {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o
	case *compact.Object:
		u, err := o.Unstructured()
		if err != nil {
			return nil
		}
		return u
	default:
		return nil
	}
}

// runningImages lists a pod's container statuses by name, image and image
// ID (the digest it runs).
func runningImages(u *unstructured.Unstructured) []any {
	return containerFields(u, "status", []string{"initContainerStatuses", "containerStatuses"}, "name", "image", "imageID")
}

// NamespaceChanged asks the workers to re-evaluate every tracked workload
// of a namespace whose opt-in changed and the subject of every AIBOM there
// (so that opting out deletes them all). NamespaceSet.OnChange calls it,
// once the filter knows the change.
func (m EventMapper) NamespaceChanged(namespace string, q adder) {
	m.Roots.invalidate(namespace)
	q.Add(Request{Op: OpNamespace, Namespace: namespace})
}

func (m EventMapper) enqueueNamespace(ctx context.Context, ns string, q adder) {
	m.learnLiveKinds(ctx, ns)
	for _, e := range m.Registry.TrackedEntries() {
		objs, err := m.Store.InNamespace(ctx, e, ns)
		if err != nil {
			log.FromContext(ctx).V(1).Info("cannot list a kind of a namespace whose opt-in changed", "namespace", ns, "kind", e.Kind.String(), "error", err.Error())
			continue
		}
		for _, obj := range objs {
			q.Add(Request{GroupKind: e.GroupKind(), Namespace: ns, Name: obj.GetName()})
		}
	}
	m.enqueueGenericCandidates(ctx, ns, q)
	aiboms := &v1alpha1.AIBOMList{}
	if err := m.Reader.List(ctx, aiboms, client.InNamespace(ns)); err != nil {
		log.FromContext(ctx).Error(err, "listing AIBOMs of a namespace whose opt-in changed", "namespace", ns)
		return
	}
	for i := range aiboms.Items {
		m.enqueueSubject(&aiboms.Items[i], q)
	}
}

// learnLiveKinds lists a namespace once in every kind read live. Such a kind
// raises no events: what the closure knows of its objects' controller kinds
// (ControllerKindHints) grows with the live reads of the walks that other
// objects' events cause. The events of a namespace whose opt-in just changed
// were dropped until now (it was not opted in, or its caches were being
// filled), so their walks never ran: without this list, a root's closure
// could skip a live kind that its new objects are controlled by, and miss
// the pods below them.
func (m EventMapper) learnLiveKinds(ctx context.Context, ns string) {
	live, ok := m.Store.(graph.LiveReads)
	if !ok || !m.optedIn(ns) {
		return
	}
	ctx = graph.WithReadMemo(ctx)
	for _, e := range m.Registry.Entries() {
		if !live.ReadsLive(e) {
			continue
		}
		if _, err := m.Store.InNamespace(ctx, e, ns); err != nil {
			log.FromContext(ctx).V(1).Info("cannot list a live-read kind of a namespace whose opt-in changed", "namespace", ns, "kind", e.Kind.String(), "error", err.Error())
		}
	}
}

// ForAIBOMs returns the handler for AIBOM objects: every AIBOM event maps
// back to its subject. A create of an AIBOM this process did not create
// (a lagging cache may have skipped a delete meanwhile), a delete, a re-pointed subject, and a status the controller did
// not write (a forged document or input hash) each re-evaluate the subject,
// whose reconcile repairs or removes the AIBOM. The controller's own status
// writes coming back are recognised and cost nothing.
func (m EventMapper) ForAIBOMs() handler.TypedEventHandler[*v1alpha1.AIBOM, Request] {
	return handler.TypedFuncs[*v1alpha1.AIBOM, Request]{
		CreateFunc: func(_ context.Context, ev event.TypedCreateEvent[*v1alpha1.AIBOM], q queue) {
			if m.Written.ownCreate(ev.Object) {
				return // our own create coming back
			}
			m.enqueueForeign(ev.Object, q)
			m.enqueueSubject(ev.Object, q)
		},
		UpdateFunc: func(_ context.Context, ev event.TypedUpdateEvent[*v1alpha1.AIBOM], q queue) {
			o, n := ev.ObjectOld, ev.ObjectNew
			// Every status field a reader relies on (statusSum): a forged
			// summary, count or document reference is repaired too.
			statusChanged := statusSum(o.Status) != statusSum(n.Status)
			if o.Spec != n.Spec || (statusChanged && !m.Written.ownStatus(n)) {
				m.enqueueSubject(n, q)
			}
			if o.Spec != n.Spec || !conditionsEqual(o, n) {
				m.enqueueForeign(n, q)
			}
		},
		DeleteFunc: func(_ context.Context, ev event.TypedDeleteEvent[*v1alpha1.AIBOM], q queue) {
			forgetObservation(ev.Object.UID)
			m.Written.forgetDeleted(ev.Object)
			m.enqueueSubject(ev.Object, q)
		},
	}
}

func (m EventMapper) enqueueSubject(a *v1alpha1.AIBOM, q adder) {
	if req, ok := m.subjectRequest(a); ok {
		q.Add(req)
	}
}

// subjectRequest is the reconcile of an AIBOM's subject: a tracked workload
// (or one of a disabled adapter), or a generic root (by name and UID: its
// kind may be unreadable).
func (m EventMapper) subjectRequest(a *v1alpha1.AIBOM) (Request, bool) {
	gk, ok := subjectGroupKind(a)
	switch {
	case !ok:
		return Request{}, false
	case m.Registry.IsTracked(gk) || m.Registry.Disabled(gk):
		return Request{GroupKind: gk, Namespace: a.Namespace, Name: a.Spec.Subject.Name}, true
	}
	if _, referenced := m.Registry.Referenced(gk); referenced || a.Labels[ManagedByLabel] != ManagedBy || a.Spec.Subject.Name == "" {
		return Request{}, false
	}
	return Request{GroupKind: gk, Namespace: a.Namespace, Name: a.Spec.Subject.Name, UID: types.UID(a.Spec.Subject.UID)}, true
}

// genericRequest is the reconcile of an object of a kind no adapter tracks
// as a generic root candidate.
func genericRequest(e graph.Entry, obj client.Object) Request {
	return Request{GroupKind: e.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// unreadOwnerRequest is the reconcile of the generic root a controller
// reference names when its kind is not registered: the owner as the
// reference names it. The kind is noted, so that the watches may start
// reading it. False for a malformed reference or a kind that is never an
// owner (referenced, or a disabled adapter's).
func (m EventMapper) unreadOwnerRequest(ref *metav1.OwnerReference, ns string) (Request, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	gk := graph.RefGroupKind(ref)
	if err != nil || gv.Version == "" || ref.Name == "" || ref.UID == "" || m.Registry.Disabled(gk) || m.Registry.ClusterScopedOwner(gk) {
		return Request{}, false
	}
	if _, referenced := m.Registry.Referenced(gk); referenced {
		return Request{}, false
	}
	m.Registry.NoteUnknownOwner(gv.WithKind(ref.Kind))
	return Request{GroupKind: gk, Namespace: ns, Name: ref.Name, UID: ref.UID}, true
}

// enqueueGenericCandidates enqueues the generic root candidates of a
// namespace ("" for all) from the caches: every object of a kind no adapter
// tracks that nothing controls (bare pods), and the owner every controller
// reference to a kind not registered names (of any object, tracked or not),
// and every object of a kind no adapter tracks whose controller is gone while
// its reference remains. Used when a namespace opts in and by the periodic
// re-verification.
func (m EventMapper) enqueueGenericCandidates(ctx context.Context, ns string, q adder) {
	for _, e := range m.Registry.Entries() {
		objs, err := m.Store.InNamespace(ctx, e, ns)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if !m.optedIn(obj.GetNamespace()) {
				continue
			}
			ref := metav1.GetControllerOfNoCopy(obj)
			switch {
			case ref == nil:
				if !e.Tracked() {
					q.Add(genericRequest(e, obj))
				}
			case !m.Registry.Registered(graph.RefGroupKind(ref)):
				if req, ok := m.unreadOwnerRequest(ref, obj.GetNamespace()); ok {
					q.Add(req)
				} else if !e.Tracked() {
					q.Add(genericRequest(e, obj))
				}
			case !e.Tracked() && m.ownerGone(ctx, ref, obj.GetNamespace()):
				// Its controller is gone while the reference remains (no
				// garbage collector acted): a candidate once its grace
				// has passed, which the reconciler decides.
				q.Add(genericRequest(e, obj))
			}
		}
	}
}

// ownerGone reports whether the registered owner a controller reference
// names is absent from the caches, or there under another UID. A kind that
// cannot be read says nothing (false).
func (m EventMapper) ownerGone(ctx context.Context, ref *metav1.OwnerReference, ns string) bool {
	entry, ok := m.Registry.Lookup(graph.RefGroupKind(ref))
	if !ok {
		return false
	}
	owner, err := graph.GetMetadata(ctx, m.Store, entry, ns, ref.Name)
	if apierrors.IsNotFound(err) {
		return true
	}
	return err == nil && owner.GetUID() != ref.UID
}

// subjectGroupKind is the group and kind of an AIBOM's subject; false when
// its apiVersion does not parse.
func subjectGroupKind(a *v1alpha1.AIBOM) (schema.GroupKind, bool) {
	gv, err := schema.ParseGroupVersion(a.Spec.Subject.APIVersion)
	if err != nil {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: gv.Group, Kind: a.Spec.Subject.Kind}, true
}

// setGVK makes sure an object from an event carries its kind: the walk and
// the closure read it from the object.
func setGVK(obj client.Object, e graph.Entry) {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(e.GVK())
	}
}
