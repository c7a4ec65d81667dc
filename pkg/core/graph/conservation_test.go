package graph_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

var forestKinds = []schema.GroupVersionKind{coretest.WidgetGVK, coretest.DeployGVK,
	// tracked
	coretest.StsGVK, coretest.RsGVK,

	// walk-only
	coretest.GearGVK, coretest.PodGVK, {Group: "unknown.io", Version: "v1", Kind: "Thing"}, // no adapter declares it
}

// randomForest builds an ownership graph parent-first, then damages it the
// ways clusters do: owners deleted with children lingering, owners re-created
// under the same name (new UID), references with the right UID and a wrong
// name, long chains past the depth cap, and ownerReference cycles.
func randomForest(rng *rand.Rand) []client.Object { return randomForestOf(rng, forestKinds) }

// randomForestOf is randomForest over the given kinds.
func randomForestOf(rng *rand.Rand, kinds []schema.GroupVersionKind) []client.Object {
	var w coretest.World
	n := 2 + rng.Intn(40)
	for i := 0; i < n; i++ {
		gvk := kinds[rng.Intn(len(kinds))]
		var owner client.Object
		switch r := rng.Float64(); {
		case len(w.Objs) > 0 && r < 0.45: // long chains, to reach the depth cap
			owner = w.Objs[len(w.Objs)-1]
		case len(w.Objs) > 0 && r < 0.8:
			owner = w.Objs[rng.Intn(len(w.Objs))]
		}
		w.Add(gvk, fmt.Sprintf("o%d", i), owner)
	}
	objs := w.Objs
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		switch r := rng.Float64(); {
		case ref != nil && r < 0.05: // stale UID: the owner was re-created
			refs := o.GetOwnerReferences()
			refs[0].UID = types.UID("stale-" + string(refs[0].UID))
			o.SetOwnerReferences(refs)
		case ref != nil && r < 0.08: // right UID, wrong name
			refs := o.GetOwnerReferences()
			refs[0].Name = "elsewhere"
			o.SetOwnerReferences(refs)
		case r < 0.11:
			coretest. // a cycle: point at any object, even a descendant
					SetController(o, objs[rng.Intn(len(objs))])
		case ref != nil && r < 0.13: // a non-controller reference only
			refs := o.GetOwnerReferences()
			refs[0].Controller = ptr.To(false)
			o.SetOwnerReferences(refs)
		}
	}
	// Owners deleted with their children lingering.
	var kept []client.Object
	for _, o := range objs {
		if rng.Float64() >= 0.08 {
			kept = append(kept, o)
		}
	}
	return kept
}

// TestConservationOverRandomForests checks the conservation invariant: every
// tracked workload appears in exactly one AIBOM, as its subject (a root) or in
// exactly one root's owned list; and the walk and the closure agree.
func TestConservationOverRandomForests(t *testing.T) {
	reg := coretest.TestRegistry(t)
	rng := rand.New(rand.NewSource(5005))
	for forest := 0; forest < 5000; forest++ {
		checkConservation(t, reg, forest, randomForest(rng))
	}
}

// TestConservationOverRandomForestsPastTheDanglingGrace: once every dangling
// reference (an owner deleted with its children lingering, or re-created
// with a new UID) has outlived its grace, the objects holding one are
// decided as the reconciler then decides them (WalkResult.Settle), and
// conservation still holds: every tracked workload in exactly one AIBOM,
// every pod under a generic root in exactly one.
func TestConservationOverRandomForestsPastTheDanglingGrace(t *testing.T) {
	reg := coretest.TestRegistry(t)
	rng := rand.New(rand.NewSource(9009))
	for forest := 0; forest < 5000; forest++ {
		checkConservationAt(t, reg, forest, randomForest(rng), true)
	}
}

// FuzzConservation lets the fuzzer pick the forests:
// go test ./pkg/core -run '^$' -fuzz FuzzConservation -fuzztime 30s
// TestConservationOverRandomForestsWithReferences adds objects of a
// referenced kind to the forests, anywhere in the ownership graph (owned by
// a workload, owning one, in a cycle): a referenced kind is never walked
// through, never a root, never absorbed, and conservation still holds.
func TestConservationOverRandomForestsWithReferences(t *testing.T) {
	recipeGK := schema.GroupKind{Group: "example.com", Kind: "Recipe"} // modelAdapter's referenced kind
	recipeGVK := recipeGK.WithVersion("v1")
	base := coretest.TestRegistry(t)
	var adapters []adapter.Adapter
	adapters = append(adapters, base.Adapters()...)
	adapters = append(adapters, coretest.TestAdapter{AdapterName: "recipes", AdapterKinds: []adapter.Kind{coretest.Kind("example.com", "Recipe", "recipes", "v1", adapter.RoleReferenced)}})
	reg, err := graph.NewRegistry(adapters...)
	require.NoError(t, err)
	kinds := append(append([]schema.GroupVersionKind(nil), forestKinds...), recipeGVK, recipeGVK)
	rng := rand.New(rand.NewSource(1414))
	for forest := 0; forest < 3000; forest++ {
		objs := randomForestOf(rng, kinds)
		checkConservation(t, reg, forest, objs)
		store := graph.NewMemoryStore(objs)
		closure := graph.Closure{Registry: reg, Store: store}
		walker := graph.Walker{Registry: reg, Store: store}
		for _, o := range objs {
			if !reg.IsTracked(o.GetObjectKind().GroupVersionKind().GroupKind()) {
				continue
			}
			// Never walked through: an object a Recipe controls is not
			// absorbed by whatever controls the Recipe.
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.Kind == "Recipe" {
				require.Nil(t, walker.TrackedOwner(context.Background(), o).Owner, "forest %d: walked through a referenced kind", forest)
			}
			d, err := closure.Descendants(context.Background(), o)
			require.NoError(t, err)
			for _, x := range d.Tracked {
				require.NotEqual(t, recipeGK, x.GetObjectKind().GroupVersionKind().GroupKind(), "forest %d: a referenced object in a closure", forest)
			}
		}
	}
}

func FuzzConservation(f *testing.F) {
	for _, seed := range []int64{1, 5005, 4711, 235} {
		f.Add(seed)
	}
	reg := coretest.TestRegistry(f)
	f.Fuzz(func(t *testing.T, seed int64) {
		checkConservation(t, reg, int(seed), randomForest(rand.New(rand.NewSource(seed))))
	})
}

func checkConservation(t *testing.T, reg *graph.Registry, forest int, objs []client.Object) {
	t.Helper()
	checkConservationAt(t, reg, forest, objs, false)
}

// checkConservationAt is checkConservation with every dangling walk settled
// (settle: past the dangling-owner grace, as the reconciler decides then).
func checkConservationAt(t *testing.T, reg *graph.Registry, forest int, objs []client.Object, settle bool) {
	t.Helper()
	ctx := context.Background()
	objs = unstructuredPods(t, objs)
	store := graph.NewMemoryStore(objs)
	walker := graph.Walker{Registry: reg, Store: store}
	closure := graph.Closure{Registry: reg, Store: store}
	appearances := map[types.UID]int{}
	suppressedBy := map[types.UID]string{}
	unfit := map[string]bool{} // pods a closure refused (a controller outside the declared path)
	absorb := func(root client.Object) {
		d, err := closure.Descendants(ctx, root)
		require.NoError(t, err)
		for _, child := range d.Tracked {
			appearances[child.GetUID()]++
		}
		for _, pod := range d.Pods {
			appearances[pod.GetUID()]++
		}
		for _, u := range d.Unfit {
			unfit[u.Name] = true
		}
	}
	// Unread generic roots: one per owner UID their references name.
	unread := map[string]bool{}
	var tracked, pods []client.Object
	walks := map[types.UID]graph.WalkResult{}
	for _, o := range objs {
		gk := o.GetObjectKind().GroupVersionKind().GroupKind()
		if !reg.Registered(gk) {
			continue // read by no one: known only from the references to it
		}
		res := walker.TrackedOwner(ctx, o)
		if settle {
			res = res.Settle()
		}
		walks[o.GetUID()] = res
		if res.Owner != nil {
			suppressedBy[o.GetUID()] = res.Owner.GroupKind.Kind + "/" + res.Owner.Name
			if key := res.Owner.GroupKind.String() + "/" + res.Owner.Name + "/" + res.Owner.UID; res.Owner.Unread && !unread[key] {
				unread[key] = true
				stub := &metav1.PartialObjectMetadata{}
				stub.SetGroupVersionKind(res.Owner.GroupKind.WithVersion("v1"))
				stub.SetNamespace(res.Owner.Namespace)
				stub.SetName(res.Owner.Name)
				stub.SetUID(types.UID(res.Owner.UID))
				absorb(stub)
			}
		}
		switch {
		case reg.IsTracked(gk):
			tracked = append(tracked, o)
			if res.Owner == nil {
				appearances[o.GetUID()]++ // a root: the subject of its own AIBOM
				absorb(o)
			}
		case walker.IsGenericRoot(o, res):
			if gk == graph.PodGroupKind {
				appearances[o.GetUID()]++ // a bare pod reports itself
			}
			absorb(o)
		}
		if gk == graph.PodGroupKind {
			pods = append(pods, o)
		}
	}
	for _, o := range tracked {
		require.Equal(t, 1, appearances[o.GetUID()],
			"forest %d: %s %s appears in %d AIBOMs (suppressed by %q)\n%s",
			forest, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), appearances[o.GetUID()], suppressedBy[o.GetUID()], describe(objs))
	}
	for _, p := range pods {
		n := appearances[p.GetUID()]
		require.LessOrEqual(t, n, 1, "forest %d: pod %s in %d AIBOMs\n%s", forest, p.GetName(), n, describe(objs))
		res := walks[p.GetUID()]
		switch {
		case (res.Owner != nil && res.Owner.Generic) || walker.IsGenericRoot(p, res):
			require.Equal(t, 1, n, "forest %d: pod %s under generic root %v in %d AIBOMs\n%s", forest, p.GetName(), res.Owner, n, describe(objs))
		case res.Owner != nil && !unfit[p.GetName()]:
			// Under a tracked root, on its declared path: in its AIBOM.
			require.Equal(t, 1, n, "forest %d: pod %s under tracked root %v in %d AIBOMs\n%s", forest, p.GetName(), res.Owner, n, describe(objs))
		}
	}
}

// unstructuredPods returns objs with every typed Pod converted to
// unstructured, the form the closure attributes pods in.
func unstructuredPods(t *testing.T, objs []client.Object) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o
		if p, ok := o.(*corev1.Pod); ok {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			require.NoError(t, err)
			u := &unstructured.Unstructured{Object: m}
			u.SetGroupVersionKind(coretest.PodGVK)
			out[i] = u
		}
	}
	return out
}

func describe(objs []client.Object) string {
	out := ""
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		owner := "-"
		if ref != nil {
			owner = fmt.Sprintf("%s/%s(%s)", ref.Kind, ref.Name, ref.UID)
		}
		out += fmt.Sprintf("  %s/%s uid=%s owner=%s\n", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), o.GetUID(), owner)
	}
	return out
}

// TestConservationOverRandomForestsWithProfileKinds adds the kinds of a
// declarative adapter to the forests: a tracked kind of its own, and a
// walk-only kind it shares with a Go adapter. Profile-defined kinds roll up
// exactly like a Go adapter's, and conservation holds.
func TestConservationOverRandomForestsWithProfileKinds(t *testing.T) {
	p, err := profile.Parse([]byte(`apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: assemblies}
spec:
  version: 0.1.0
  kinds:
  - {group: profiles.example.com, kind: Assembly, resource: assemblies, versions: [v1], role: tracked, rules: {models: [{path: spec.model}]}}
  - {group: `+coretest.GearGVK.Group+`, kind: `+coretest.GearGVK.Kind+`, resource: gears, versions: [`+coretest.GearGVK.Version+`], role: walk-only}
`), "test")
	require.NoError(t, err)
	base := coretest.TestRegistry(t)
	reg, err := graph.NewRegistry(append(base.Adapters(), p)...)
	require.NoError(t, err)
	assembly := schema.GroupVersionKind{Group: "profiles.example.com", Version: "v1", Kind: "Assembly"}
	require.True(t, reg.IsTracked(assembly.GroupKind()))
	kinds := append(append([]schema.GroupVersionKind(nil), forestKinds...), assembly, assembly)
	rng := rand.New(rand.NewSource(2211))
	for forest := 0; forest < 3000; forest++ {
		checkConservation(t, reg, forest, randomForestOf(rng, kinds))
	}
}
