package watch

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// The supervisor's transform compacts the kinds read whole (tracked kinds
// and pods, after their transform), not walk-only kinds, records the
// controller's kind, and leaves an object it already compacted as it is
// (client-go may hand it an object twice).
func TestSupervisorTransformCompactsKindsReadWhole(t *testing.T) {
	reg := coretest.TestRegistry(t)
	s := &Supervisor{Registry: reg}
	deploy := coretest.EntryOf(t, reg, coretest.DeployGVK)
	rs := coretest.EntryOf(t, reg, coretest.RsGVK)
	pod := coretest.EntryOf(t, reg, coretest.PodGVK)

	u := deployment("team-a", "llama", "g")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	unstructured.SetNestedField(u.Object, map[string]any{"replicas": int64(4)}, "status")
	out, err := s.transform(deploy)(u)
	require.NoError(t, err)
	c, ok := out.(*compact.Object)
	require.True(t, ok, "a tracked kind is cached compact, got %T", out)
	got, err := c.Unstructured()
	require.NoError(t, err)
	_, hasStatus := got.Object["status"]
	require.False(t, hasStatus, "TransformTracked ran first")
	require.Nil(t, got.GetManagedFields())
	require.True(t, s.ownerKindsOf(deploy.GroupKind()).has(schema.GroupKind{Group: "example.com", Kind: "Graph"}))

	twice, err := s.transform(deploy)(c)
	require.NoError(t, err)
	require.Same(t, c, twice)

	p := coretest.DecodeYAML(t, coretest.FullPodYAML)
	want, err := TransformPod(p.DeepCopy())
	require.NoError(t, err)
	out, err = s.transform(pod)(p)
	require.NoError(t, err)
	cp, ok := out.(*compact.Object)
	require.True(t, ok, "pods are cached compact too, got %T", out)
	gotPod, err := cp.Unstructured()
	require.NoError(t, err)
	require.Equal(t, want.(*unstructured.Unstructured).Object, gotPod.Object, "what TransformPod keeps, no more")
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "rs"}}
	out, err = s.transform(rs)(m)
	require.NoError(t, err)
	require.IsType(t, &metav1.PartialObjectMetadata{}, out)
}

// cacheStoreOver returns a cacheStore over an informer store holding objs
// (transformed as the supervisor transforms entry e), with the indexes the
// supervisor gives it.
func cacheStoreOver(t *testing.T, s *Supervisor, e graph.Entry, objs ...*unstructured.Unstructured) cacheStore {
	t.Helper()
	indexer := toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, toolscache.Indexers{
		toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc,
		controllerIndex:           controllerIndexFunc,
	})
	tr := s.transform(e)
	for _, o := range objs {
		out, err := tr(o)
		require.NoError(t, err)
		require.NoError(t, indexer.Add(out))
	}
	return cacheStore{gvk: e.GVK(), indexer: indexer}
}

func deployment(ns, name string, owner types.UID) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(1)}}}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID(ns + "-" + name))
	if owner != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Graph", Name: "g", UID: owner, Controller: new(true)}})
	}
	return u
}

func TestCacheStoreReadsCompactObjectsThroughTheIndexes(t *testing.T) {
	reg := coretest.TestRegistry(t)
	s := &Supervisor{Registry: reg}
	e := coretest.EntryOf(t, reg, coretest.DeployGVK)
	store := cacheStoreOver(t, s, e,
		deployment("a", "one", "g1"), deployment("a", "two", "g1"), deployment("a", "three", "g2"),
		deployment("b", "one", "g1"), deployment("b", "free", ""))
	ctx := context.Background()

	obj, err := store.Get(ctx, e, "a", "one")
	require.NoError(t, err)
	u, ok := obj.(*unstructured.Unstructured)
	require.True(t, ok, "tracked kinds are read unstructured, got %T", obj)
	require.Equal(t, e.GVK(), u.GroupVersionKind())
	require.Equal(t, types.UID("a-one"), u.GetUID())
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	require.Equal(t, int64(1), replicas)

	_, err = store.Get(ctx, e, "a", "missing")
	require.True(t, apierrors.IsNotFound(err), "%v", err)

	names := func(objs []client.Object, err error) []string {
		t.Helper()
		require.NoError(t, err)
		var out []string
		for _, o := range objs {
			require.IsType(t, &unstructured.Unstructured{}, o)
			require.Equal(t, e.GVK(), o.GetObjectKind().GroupVersionKind())
			out = append(out, o.GetNamespace()+"/"+o.GetName())
		}
		return out
	}
	require.ElementsMatch(t, []string{"a/one", "a/two"}, names(store.ControlledBy(ctx, e, "a", "g1")), "the controller index is per namespace")
	require.ElementsMatch(t, []string{"a/three"}, names(store.ControlledBy(ctx, e, "a", "g2")))
	require.Empty(t, names(store.ControlledBy(ctx, e, "b", "g2")))
	require.ElementsMatch(t, []string{"a/one", "a/two", "b/one"}, names(store.ControlledBy(ctx, e, metav1.NamespaceAll, "g1")))
	require.ElementsMatch(t, []string{"b/one", "b/free"}, names(store.InNamespace(ctx, e, "b")))
	require.Len(t, names(store.InNamespace(ctx, e, metav1.NamespaceAll)), 5)

	// A reader's change never reaches the cache.
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(7), "spec", "replicas"))
	u.SetOwnerReferences(nil)
	again, err := store.Get(ctx, e, "a", "one")
	require.NoError(t, err)
	replicas, _, _ = unstructured.NestedInt64(again.(*unstructured.Unstructured).Object, "spec", "replicas")
	require.Equal(t, int64(1), replicas)
	require.Len(t, names(store.ControlledBy(ctx, e, "a", "g1")), 2)

	// The handlers' replay gets the cached objects themselves.
	cached, err := store.cached("a")
	require.NoError(t, err)
	require.Len(t, cached, 3)
	for _, o := range cached {
		require.IsType(t, &compact.Object{}, o)
	}
}

func TestCacheStoreCopiesOtherForms(t *testing.T) {
	reg := coretest.TestRegistry(t)
	s := &Supervisor{Registry: reg}
	e := coretest.EntryOf(t, reg, coretest.RsGVK)
	indexer := toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, toolscache.Indexers{
		toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc,
		controllerIndex:           controllerIndexFunc,
	})
	rs := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "rs", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d-uid", Controller: new(true)}}}}
	out, err := s.transform(e)(rs)
	require.NoError(t, err)
	require.NoError(t, indexer.Add(out))
	store := cacheStore{gvk: e.GVK(), indexer: indexer}

	got, err := store.ControlledBy(context.Background(), e, "a", "d-uid")
	require.NoError(t, err)
	require.Len(t, got, 1)
	m := got[0].(*metav1.PartialObjectMetadata)
	require.Equal(t, e.GVK(), m.GroupVersionKind())
	m.OwnerReferences[0].UID = "forged"
	again, err := store.ControlledBy(context.Background(), e, "a", "d-uid")
	require.NoError(t, err)
	require.Len(t, again, 1, "the reader had a deep copy")
}

// The walk's and the closure's reads (graph.MetadataReader) copy a compact
// object's metadata without decoding it; a reader's change stays its own.
func TestCacheStoreMetadataReadsOfCompactObjects(t *testing.T) {
	reg := coretest.TestRegistry(t)
	s := &Supervisor{Registry: reg}
	e := coretest.EntryOf(t, reg, coretest.DeployGVK)
	store := cacheStoreOver(t, s, e, deployment("a", "one", "g1"), deployment("a", "two", "g1"), deployment("b", "one", "g1"))

	obj, err := store.getMetadata("a", "one")
	require.NoError(t, err)
	m, ok := obj.(*metav1.PartialObjectMetadata)
	require.True(t, ok, "got %T", obj)
	require.Equal(t, e.GVK(), m.GroupVersionKind())
	require.Equal(t, types.UID("a-one"), m.UID)
	require.Equal(t, types.UID("g1"), metav1.GetControllerOf(m).UID)
	m.OwnerReferences[0].UID = "forged"

	_, err = store.getMetadata("a", "missing")
	require.True(t, apierrors.IsNotFound(err), "%v", err)

	objs, err := store.controlledByMetadata("a", "g1")
	require.NoError(t, err)
	require.Len(t, objs, 2, "the reader's change did not reach the cache or its index")
	for _, o := range objs {
		require.IsType(t, &metav1.PartialObjectMetadata{}, o)
		require.Equal(t, e.GVK(), o.GetObjectKind().GroupVersionKind())
	}
	all, err := store.controlledByMetadata(metav1.NamespaceAll, "g1")
	require.NoError(t, err)
	require.Len(t, all, 3)
}

// A kind's record of controller kinds only grows, whoever adds to it at the
// same time: every kind added is there at the end, a kind never added is not.
func TestOwnerKindSetGrowsUnderConcurrentAdds(t *testing.T) {
	s := &Supervisor{}
	set := s.ownerKindsOf(schema.GroupKind{Kind: "Pod"})
	require.Same(t, set, s.ownerKindsOf(schema.GroupKind{Kind: "Pod"}), "one record per kind")
	require.False(t, set.has(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}), "an empty record")
	kinds := make([]schema.GroupKind, 32)
	for i := range kinds {
		kinds[i] = schema.GroupKind{Group: "example.com", Kind: fmt.Sprintf("K%d", i)}
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, gk := range kinds {
				set.add(gk)
				if !set.has(gk) {
					t.Errorf("%v not there right after its addition", gk)
				}
			}
		}()
	}
	wg.Wait()
	for _, gk := range kinds {
		require.True(t, set.has(gk), "%v", gk)
	}
	require.False(t, set.has(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}))
}
