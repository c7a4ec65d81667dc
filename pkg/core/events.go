package core

import (
	"context"
	"reflect"

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
)

type queue = workqueue.TypedRateLimitingInterface[Request]

// EventMapper maps events on registered kinds, namespaces and AIBOMs to the
// tracked workloads they concern. A pod's or a descendant's create, delete or
// relevant change enqueues the root it belongs to (through the UID-checked
// walk); a creation or deletion also re-evaluates the tracked descendants,
// which become roots when their owner goes away.
type EventMapper struct {
	Registry *Registry
	Store    Store
	// Reader lists AIBOMs when a namespace opts in or out.
	Reader client.Reader
	// References maps a referenced object to the roots that used it (see
	// references.go); may be nil.
	References *ReferenceIndex
}

func (m EventMapper) walker() Walker { return Walker{Registry: m.Registry, Store: m.Store} }

// OnAdd handles the creation of an object of a registered kind.
func (m EventMapper) OnAdd(ctx context.Context, e Entry, obj client.Object, q queue) {
	m.enqueue(ctx, e, obj, true, q)
}

// OnUpdate handles an update of an object of a registered kind.
func (m EventMapper) OnUpdate(ctx context.Context, e Entry, oldObj, newObj client.Object, q queue) {
	ownersChanged := !reflect.DeepEqual(oldObj.GetOwnerReferences(), newObj.GetOwnerReferences())
	if ownersChanged {
		m.enqueue(ctx, e, oldObj, false, q)
	}
	if ownersChanged || relevantChange(e, oldObj, newObj) {
		m.enqueue(ctx, e, newObj, ownersChanged, q)
	}
}

// OnDelete handles the deletion of an object of a registered kind.
func (m EventMapper) OnDelete(ctx context.Context, e Entry, obj client.Object, q queue) {
	m.enqueue(ctx, e, obj, true, q)
}

// InformerHandler adapts the mapper to a client-go informer of one kind.
func (m EventMapper) InformerHandler(ctx context.Context, e Entry, q queue) toolscache.ResourceEventHandler {
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

// enqueue adds the object itself (when tracked), the root it belongs to,
// and, when withDescendants, its tracked descendants.
func (m EventMapper) enqueue(ctx context.Context, e Entry, obj client.Object, withDescendants bool, q queue) {
	if sq, ok := q.(*standbyQueue); ok && !sq.attached() {
		return // a follower: everything is replayed once it leads
	}
	setGVK(obj, e)
	if e.Role == adapter.RoleReferenced {
		m.enqueueReferrers(e, obj, q)
		return
	}
	if e.Tracked() {
		q.Add(Request{GroupKind: e.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()})
	}
	if root := m.walker().Root(ctx, obj); root != nil {
		q.Add(Request{GroupKind: root.GroupKind, Namespace: root.Namespace, Name: root.Name})
	}
	if !withDescendants {
		return
	}
	desc, err := Closure{Registry: m.Registry, Store: m.Store}.Descendants(ctx, obj)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing descendants for an event; they are re-evaluated on their own next event")
		return
	}
	for _, d := range desc.Tracked {
		q.Add(Request{GroupKind: d.GetObjectKind().GroupVersionKind().GroupKind(), Namespace: d.GetNamespace(), Name: d.GetName()})
	}
}

// relevantChange reports whether an update can change a document: for tracked
// kinds anything but status, for pods the running images, for other
// walk-only kinds nothing but ownership (handled by the caller).
func relevantChange(e Entry, oldObj, newObj client.Object) bool {
	switch {
	case e.GroupKind() == PodGroupKind:
		return !reflect.DeepEqual(runningImages(oldObj), runningImages(newObj))
	case e.Tracked(), e.Role == adapter.RoleReferenced:
		return oldObj.GetGeneration() != newObj.GetGeneration() ||
			!reflect.DeepEqual(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
			oldObj.GetUID() != newObj.GetUID()
	default:
		return false
	}
}

func runningImages(obj client.Object) []any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	var out []any
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(u.Object, "status", field)
		for _, s := range statuses {
			if m, ok := s.(map[string]any); ok {
				out = append(out, m["name"], m["image"], m["imageID"])
			}
		}
	}
	return out
}

// ForNamespaces returns the handler for namespaces: a change of the opt-in
// label enqueues every tracked workload in the namespace and the subject of
// every AIBOM there (so that opting out deletes them all).
func (m EventMapper) ForNamespaces() handler.TypedEventHandler[client.Object, Request] {
	return handler.TypedFuncs[client.Object, Request]{
		CreateFunc: func(ctx context.Context, ev event.TypedCreateEvent[client.Object], q queue) {
			if ev.Object.GetLabels()[OptInLabel] == "true" {
				m.enqueueNamespace(ctx, ev.Object.GetName(), q)
			}
		},
		UpdateFunc: func(ctx context.Context, ev event.TypedUpdateEvent[client.Object], q queue) {
			if ev.ObjectOld.GetLabels()[OptInLabel] != ev.ObjectNew.GetLabels()[OptInLabel] {
				m.enqueueNamespace(ctx, ev.ObjectNew.GetName(), q)
			}
		},
	}
}

func (m EventMapper) enqueueNamespace(ctx context.Context, ns string, q queue) {
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
	aiboms := &v1alpha1.AIBOMList{}
	if err := m.Reader.List(ctx, aiboms, client.InNamespace(ns)); err != nil {
		log.FromContext(ctx).Error(err, "listing AIBOMs of a namespace whose opt-in changed", "namespace", ns)
		return
	}
	for i := range aiboms.Items {
		m.enqueueSubject(&aiboms.Items[i], q)
	}
}

// ForAIBOMs returns the handler for AIBOM objects: an AIBOM deleted or
// re-pointed by someone else is re-evaluated through its subject.
func (m EventMapper) ForAIBOMs() handler.TypedEventHandler[*v1alpha1.AIBOM, Request] {
	return handler.TypedFuncs[*v1alpha1.AIBOM, Request]{
		UpdateFunc: func(ctx context.Context, ev event.TypedUpdateEvent[*v1alpha1.AIBOM], q queue) {
			if ev.ObjectOld.Spec != ev.ObjectNew.Spec {
				m.enqueueSubject(ev.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, ev event.TypedDeleteEvent[*v1alpha1.AIBOM], q queue) {
			m.enqueueSubject(ev.Object, q)
		},
	}
}

func (m EventMapper) enqueueSubject(a *v1alpha1.AIBOM, q queue) {
	if gk, ok := subjectGroupKind(a); ok && m.Registry.IsTracked(gk) {
		q.Add(Request{GroupKind: gk, Namespace: a.Namespace, Name: a.Spec.Subject.Name})
	}
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
func setGVK(obj client.Object, e Entry) {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(e.GVK())
	}
}
