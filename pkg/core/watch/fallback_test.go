package watch

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// fallbackWorld: Widget (tracked, cached) -> Gear (walk-only, on the
// fallback: read live) -> Gear -> 2 Pods (cached), plus an unrelated Gear
// chain in the same namespace.
type fallbackWorld struct {
	sup    *Supervisor
	meta   *metadatafake.FakeMetadataClient
	root   *unstructured.Unstructured
	pods   []*unstructured.Unstructured
	gears  []*metav1.PartialObjectMetadata
	reg    *graph.Registry
	widget graph.Entry
}

func ref(gvk schema.GroupVersionKind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

func newFallbackWorld(t *testing.T) *fallbackWorld {
	t.Helper()
	w := &fallbackWorld{reg: coretest.TestRegistry(t)}
	w.widget = coretest.EntryOf(t, w.reg, coretest.WidgetGVK)
	w.root = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	w.root.SetGroupVersionKind(coretest.WidgetGVK)
	w.root.SetNamespace(coretest.Ns)
	w.root.SetName("root")
	w.root.SetUID("uid-root")
	gear := func(name string, uid types.UID, owner metav1.OwnerReference) *metav1.PartialObjectMetadata {
		g := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: coretest.Ns, Name: name, UID: uid, OwnerReferences: []metav1.OwnerReference{owner},
			Annotations: map[string]string{graph.LastAppliedAnnotation: "{}"}}}
		g.SetGroupVersionKind(coretest.GearGVK)
		w.gears = append(w.gears, g)
		return g
	}
	gear("g1", "uid-g1", ref(coretest.WidgetGVK, "root", "uid-root"))
	g2 := gear("g2", "uid-g2", ref(coretest.GearGVK, "g1", "uid-g1"))
	gear("other", "uid-other", ref(coretest.WidgetGVK, "elsewhere", "uid-elsewhere"))
	for i := range 2 {
		p := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"containerStatuses": []any{
			map[string]any{"name": "main", "image": "img:1", "imageID": fmt.Sprintf("img@sha256:%064d", i)}}}}}
		p.SetGroupVersionKind(coretest.PodGVK)
		p.SetNamespace(coretest.Ns)
		p.SetName(fmt.Sprintf("pod-%d", i))
		p.SetUID(types.UID(fmt.Sprintf("uid-pod-%d", i)))
		p.SetOwnerReferences([]metav1.OwnerReference{ref(coretest.GearGVK, g2.Name, g2.UID)})
		w.pods = append(w.pods, p)
	}

	w.sup = &Supervisor{Registry: w.reg}
	w.sup.init()
	podList := &unstructured.UnstructuredList{}
	podList.SetGroupVersionKind(coretest.PodGVK.GroupVersion().WithKind("PodList"))
	podList.SetResourceVersion("1")
	for _, p := range w.pods {
		podList.Items = append(podList.Items, *p.DeepCopy())
	}
	startMemoryCache(t, w.sup, coretest.EntryOf(t, w.reg, coretest.PodGVK), podList)
	widgets := &unstructured.UnstructuredList{}
	widgets.SetGroupVersionKind(coretest.WidgetGVK.GroupVersion().WithKind("WidgetList"))
	widgets.SetResourceVersion("1")
	widgets.Items = append(widgets.Items, *w.root.DeepCopy())
	startMemoryCache(t, w.sup, w.widget, widgets)
	for _, gvk := range []schema.GroupVersionKind{coretest.DeployGVK, coretest.StsGVK, coretest.RsGVK, coretest.SecretGVK} {
		e := coretest.EntryOf(t, w.reg, gvk)
		startMemoryCache(t, w.sup, e, listOf(e, nil))
	}

	scheme := runtime.NewScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	objs := make([]runtime.Object, len(w.gears))
	for i, g := range w.gears {
		objs[i] = g.DeepCopy()
	}
	w.meta = metadatafake.NewSimpleMetadataClient(scheme, objs...)
	w.sup.meta = w.meta
	kw := &kindWatch{entry: coretest.EntryOf(t, w.reg, coretest.GearGVK), fallback: true, cancel: func() {}, owners: w.sup.ownerKindsOf(coretest.GearGVK.GroupKind())}
	w.sup.kinds[coretest.GearGVK.GroupKind()] = kw
	require.NoError(t, w.sup.syncFallback(context.Background(), kw))
	w.meta.ClearActions()
	return w
}

// requests returns the fake API server's requests since index from, as
// "verb resource".
func (w *fallbackWorld) requests(from int) []string {
	var out []string
	for _, a := range w.meta.Actions()[from:] {
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

// The closure through a kind on the fallback: its namespace is listed once
// per closure however many nodes ask, children are matched by controller
// UID, and the pods below are found.
func TestFallbackClosureListsEachKindOncePerClosure(t *testing.T) {
	w := newFallbackWorld(t)
	ctx := context.Background()
	closure := graph.Closure{Registry: w.reg, Store: w.sup}

	d, err := closure.Descendants(ctx, w.root)
	require.NoError(t, err)
	require.Empty(t, d.Misses)
	require.Len(t, d.Pods, 2)
	require.Equal(t, "pod-0", d.Pods[0].GetName())
	require.Equal(t, []string{"list gears"}, w.requests(0))

	// The next closure (the next reconcile) lists again: the memo lives as
	// long as one closure, since without a watch nothing tells it of changes.
	n := len(w.meta.Actions())
	_, err = closure.Descendants(ctx, w.root)
	require.NoError(t, err)
	require.Equal(t, []string{"list gears"}, w.requests(n))

	// A context that already carries a memo shares it.
	mctx := graph.WithReadMemo(ctx)
	n = len(w.meta.Actions())
	for range 3 {
		_, err = closure.Descendants(mctx, w.root)
		require.NoError(t, err)
	}
	require.Equal(t, []string{"list gears"}, w.requests(n))
}

// The walk through a kind on the fallback: one live GET per hop, checked
// on UID like any hop; the live objects lose the last-applied annotation.
func TestFallbackWalkGetsEachHopLive(t *testing.T) {
	w := newFallbackWorld(t)
	ctx := context.Background()
	walker := graph.Walker{Registry: w.reg, Store: w.sup}

	res := walker.TrackedOwner(ctx, w.pods[0])
	require.NotNil(t, res.Owner, "%+v", res)
	require.Equal(t, "root", res.Owner.Name)
	require.Equal(t, 3, res.Hops)
	require.Equal(t, []string{"get gears", "get gears"}, w.requests(0))

	g, err := w.sup.Get(ctx, coretest.EntryOf(t, w.reg, coretest.GearGVK), coretest.Ns, "g1")
	require.NoError(t, err)
	require.Equal(t, coretest.GearGVK, g.GetObjectKind().GroupVersionKind())
	require.NotContains(t, g.GetAnnotations(), graph.LastAppliedAnnotation)

	// g2 re-created under the same name with another UID: the stale pod's
	// reference names the old UID, and the walk rejects the edge.
	require.NoError(t, w.meta.Tracker().Delete(coretest.GearGVK.GroupVersion().WithResource("gears"), coretest.Ns, "g2"))
	fresh := w.gears[1].DeepCopy()
	fresh.UID = "uid-g2-new"
	require.NoError(t, w.meta.Tracker().Add(fresh))
	res = walker.TrackedOwner(ctx, w.pods[0])
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonUIDMismatch, res.Reason)
}

// A kind on the fallback that may not be listed after all: the closure
// records the miss (the pods below stay unattributed, as for any unreadable
// kind) and does not fail; one list per closure still.
func TestFallbackForbiddenListIsAMiss(t *testing.T) {
	w := newFallbackWorld(t)
	w.meta.PrependReactor("list", "gears", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: coretest.GearGVK.Group, Resource: "gears"}, "", fmt.Errorf("denied"))
	})
	d, err := graph.Closure{Registry: w.reg, Store: w.sup}.Descendants(context.Background(), w.root)
	require.NoError(t, err)
	require.Empty(t, d.Pods)
	require.Equal(t, []string{"Gear.example.com"}, d.Misses)
	require.Equal(t, []string{"list gears"}, w.requests(0))
}

// A kind whose objects never had a controller of the parent's kind is not
// queried, whether cached or read live; unreadable kinds always are.
func TestClosureSkipsKindsThatCannotBeControlledByTheParent(t *testing.T) {
	w := newFallbackWorld(t)
	pod := coretest.EntryOf(t, w.reg, coretest.PodGVK)
	gear := coretest.EntryOf(t, w.reg, coretest.GearGVK)
	require.True(t, w.sup.MayBeControlledBy(pod, coretest.GearGVK.GroupKind()))
	require.False(t, w.sup.MayBeControlledBy(pod, coretest.RsGVK.GroupKind()))
	require.False(t, w.sup.MayBeControlledBy(w.widget, coretest.GearGVK.GroupKind()))
	require.False(t, w.sup.MayBeControlledBy(coretest.EntryOf(t, w.reg, coretest.RsGVK), coretest.DeployGVK.GroupKind()))
	// The live-read Gear, from its first list: Widgets and Gears control
	// Gears, nothing else does.
	require.True(t, w.sup.MayBeControlledBy(gear, coretest.WidgetGVK.GroupKind()))
	require.True(t, w.sup.MayBeControlledBy(gear, coretest.GearGVK.GroupKind()))
	require.False(t, w.sup.MayBeControlledBy(gear, coretest.PodGVK.GroupKind()), "live-read kind below a bare pod")
	require.False(t, w.sup.MayBeControlledBy(gear, coretest.DeployGVK.GroupKind()), "live-read kind below an owner-less Deployment")

	// The closure from a pod lists nothing, live or cached.
	counting := &coretest.CountingStore{Store: w.sup}
	d, err := graph.Closure{Registry: w.reg, Store: counting}.Descendants(context.Background(), w.pods[0])
	require.NoError(t, err)
	require.Empty(t, d.Pods)
	require.Empty(t, d.Misses)
	require.Zero(t, counting.Lists)
	require.NotContains(t, w.requests(0), "list gears", "no live list")
	w.meta.ClearActions()

	// From the root: Widget -> Gear (live) -> Gear (live) -> Pods (cached);
	// the kinds without such controllers are skipped.
	counting.Lists = 0
	d, err = graph.Closure{Registry: w.reg, Store: counting}.Descendants(context.Background(), w.root)
	require.NoError(t, err)
	require.Len(t, d.Pods, 2)
	require.ElementsMatch(t, []types.UID{"uid-g1", "uid-g2"}, d.Live, "the live-read objects the closure passed")
	// The root asks Gear; g1 and g2, Gears, ask Gear and Pod: 5 instead of
	// 5 nodes x 7 kinds.
	require.Equal(t, 5, counting.Lists)
	require.Equal(t, []string{"list gears"}, w.requests(0))

	// A walk hop through a Gear teaches the record a new controller kind.
	require.NoError(t, w.meta.Tracker().Add(&metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: coretest.GearGVK.GroupVersion().String(), Kind: coretest.GearGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: coretest.Ns, Name: "g3", UID: "uid-g3", OwnerReferences: []metav1.OwnerReference{ref(coretest.DeployGVK, "d", "uid-d")}}}))
	_, err = w.sup.Get(context.Background(), gear, coretest.Ns, "g3")
	require.NoError(t, err)
	require.True(t, w.sup.MayBeControlledBy(gear, coretest.DeployGVK.GroupKind()))

	// A kind without a cache is always asked (and reported as a miss).
	w.sup.stop(coretest.RsGVK.GroupKind())
	require.True(t, w.sup.MayBeControlledBy(coretest.EntryOf(t, w.reg, coretest.RsGVK), coretest.DeployGVK.GroupKind()))
}
