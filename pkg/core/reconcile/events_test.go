package reconcile

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

func newTestQueue(t *testing.T) workqueue.TypedRateLimitingInterface[Request] {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Request]())
	t.Cleanup(q.ShutDown)
	return q
}

// readlessStore fails the test on any read: informer handlers must only
// enqueue.
type readlessStore struct{ t *testing.T }

func (s readlessStore) Get(context.Context, graph.Entry, string, string) (client.Object, error) {
	s.t.Fatal("an informer handler read the store (Get)")
	return nil, nil
}
func (s readlessStore) ControlledBy(context.Context, graph.Entry, string, types.UID) ([]client.Object, error) {
	s.t.Fatal("an informer handler read the store (ControlledBy)")
	return nil, nil
}
func (s readlessStore) InNamespace(context.Context, graph.Entry, string) ([]client.Object, error) {
	s.t.Fatal("an informer handler read the store (InNamespace)")
	return nil, nil
}

// An owner deleted and re-created under the same name, delivered as one
// update with a new UID (a relist after a watch gap), with ownerReferences
// unchanged: the child rolled up into the old owner is re-walked (it is a
// root now: its reference names the old UID).
func TestOwnerUIDChangeViaUpdateRewalksTheChildren(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	oldOwner := w.Add(coretest.WidgetGVK, "graph", nil)
	child := w.Add(coretest.DeployGVK, "worker", oldOwner)
	newOwner := w.Add(coretest.WidgetGVK, "other", nil)
	newOwner.SetName("graph") // same name, another UID
	newChild := w.Add(coretest.DeployGVK, "fresh", newOwner)
	// The store holds what the cache holds after the relist: the new owner,
	// the stale child and the new owner's child.
	store := graph.NewMemoryStore([]client.Object{newOwner, child, newChild})
	m := EventMapper{Registry: reg, Store: store, Roots: NewRootCache()}
	q := newTestQueue(t)
	ctx := context.Background()

	m.OnUpdate(ctx, coretest.EntryOf(t, reg, coretest.WidgetGVK), oldOwner, newOwner, q)
	got := drainMapped(ctx, m, q)
	require.Contains(t, got, Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "worker"}, "the stale child of the old UID")
	require.Contains(t, got, Request{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "fresh"}, "the new owner's child")
	require.Contains(t, got, Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: coretest.Ns, Name: "graph"})
}

// Informer handlers only enqueue: no read, whatever the event; and events of
// a namespace that has not opted in enqueue nothing at all.
func TestHandlersOnlyEnqueueAndFilterNamespaces(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	d := w.Add(coretest.DeployGVK, "d", nil)
	rs := w.Add(coretest.RsGVK, "d-1", d)
	pod := w.Add(coretest.PodGVK, "d-1-x", rs)
	set := watch.NewNamespaceSet()
	set.Handler().OnAdd(optedIn(coretest.Ns), false)
	m := EventMapper{Registry: reg, Store: readlessStore{t}, Namespaces: set, Roots: NewRootCache()}
	q := newTestQueue(t)
	ctx := context.Background()
	for _, o := range []client.Object{d, rs, pod} {
		e := coretest.EntryOf(t, reg, o.GetObjectKind().GroupVersionKind())
		m.OnAdd(ctx, e, o, q)
		m.OnUpdate(ctx, e, o, o, q)
		m.OnDelete(ctx, e, o, q)
	}
	require.Positive(t, q.Len())

	other := newTestQueue(t)
	for _, o := range []client.Object{d, rs, pod} {
		o := o.DeepCopyObject().(client.Object)
		o.SetNamespace("not-opted-in")
		e := coretest.EntryOf(t, reg, o.GetObjectKind().GroupVersionKind())
		m.OnAdd(ctx, e, o, other)
		m.OnDelete(ctx, e, o, other)
	}
	require.Zero(t, other.Len(), "events of a namespace that did not opt in cost nothing but the filter")
}

// A chain of tracked owners of any length is resolved one level per queue
// item, each level at most MaxWalkDepth hops plus the walk's cycle check;
// the levels are cached until an ownership change in the namespace.
func TestLongChainIsResolvedOneLevelPerItem(t *testing.T) {
	reg := coretest.TestRegistry(t)
	w := &coretest.World{}
	const n = 600
	var prev client.Object
	for i := range n {
		prev = w.Add(coretest.DeployGVK, fmt.Sprintf("d%03d", i), prev)
	}
	rs := w.Add(coretest.RsGVK, "rs", prev)
	pod := w.Add(coretest.PodGVK, "pod", rs)
	counting := &coretest.CountingStore{Store: graph.NewMemoryStore(w.Objs)}
	m := EventMapper{Registry: reg, Store: counting, Roots: NewRootCache()}
	q := newTestQueue(t)
	ctx := context.Background()

	m.OnUpdate(ctx, coretest.EntryOf(t, reg, coretest.PodGVK), pod, pod, q) // not relevant: nothing
	require.Zero(t, q.Len())
	m.OnDelete(ctx, coretest.EntryOf(t, reg, coretest.PodGVK), pod, q)
	items, maxReads := 0, 0
	var reconciles []Request
	for q.Len() > 0 {
		req, _ := q.Get()
		before := counting.Gets
		if !m.Process(ctx, req, q) {
			reconciles = append(reconciles, req)
		} else {
			items++
		}
		maxReads = max(maxReads, counting.Gets-before)
		q.Done(req)
	}
	require.Equal(t, []Request{{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "d000"}}, reconciles, "the chain's root")
	require.LessOrEqual(t, items, n+2)
	require.LessOrEqual(t, maxReads, 1+graph.MaxWalkDepth+graph.MaxClimb, "one level per item: bounded reads")

	// Again (a creation changes no cached level): the cached levels are
	// followed in one item, without a read.
	counting.Gets = 0
	m.OnAdd(ctx, coretest.EntryOf(t, reg, coretest.PodGVK), pod, q)
	items = 0
	reconciles = nil
	for q.Len() > 0 {
		req, _ := q.Get()
		if !m.Process(ctx, req, q) {
			reconciles = append(reconciles, req)
		} else {
			items++
		}
		q.Done(req)
	}
	require.Equal(t, []Request{{GroupKind: coretest.DeployGVK.GroupKind(), Namespace: coretest.Ns, Name: "d000"}}, reconciles)
	require.LessOrEqual(t, items, 2, "root_of through cached levels, and the pod's descendants")
	require.Zero(t, counting.Gets, "resolved levels are cached")

	// An ownership change in the namespace invalidates them.
	m.OnDelete(ctx, coretest.EntryOf(t, reg, coretest.PodGVK), pod, q)
	drainMapped(ctx, m, q)
	require.Positive(t, counting.Gets)
}

// optedIn is a namespace with the opt-in label.
func optedIn(name string) client.Object {
	n := &metav1.PartialObjectMetadata{}
	n.SetName(name)
	n.SetLabels(map[string]string{graph.OptInLabel: "true"})
	return n
}
