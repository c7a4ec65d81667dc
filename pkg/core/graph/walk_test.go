package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestTrackedOwnerAtHopOne(t *testing.T) {
	var w coretest.World
	deploy := w.Add(coretest.DeployGVK, "web", nil)
	rs := w.Add(coretest.RsGVK, "web-1", deploy)
	w.Add(coretest.PodGVK, "web-1-a", rs)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)

	// A Deployment owned by a Widget: suppressed at hop 1.
	var w2 coretest.World
	widget := w2.Add(coretest.WidgetGVK, "graph", nil)
	owned := w2.Add(coretest.DeployGVK, "graph-worker", widget)
	_, store2 := w2.Store(t, reg, nil)
	res := graph.Walker{Registry: reg, Store: store2}.TrackedOwner(context.Background(), owned)
	require.NotNil(t, res.Owner)
	require.Equal(t, "graph", res.Owner.Name)
	require.Equal(t, schema.GroupKind{Group: "example.com", Kind: "Widget"}, res.Owner.GroupKind)
	require.Equal(t, 1, res.Hops)

	// A ReplicaSet's walk reaches its Deployment at hop 1 too.
	res = graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), rs)
	require.NotNil(t, res.Owner)
	require.Equal(t, "web", res.Owner.Name)
}

func TestTrackedOwnerAtHopThree(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	gear := w.Add(coretest.GearGVK, "graph-gear", widget)
	rs := w.Add(coretest.RsGVK, "graph-gear-rs", gear)
	pod := w.Add(coretest.PodGVK, "graph-gear-rs-a", rs)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), pod)
	require.NotNil(t, res.Owner)
	require.Equal(t, "graph", res.Owner.Name)
	require.Equal(t, 3, res.Hops)
}

func TestUntrackedRootCostsNoRead(t *testing.T) {
	var w coretest.World
	deploy := w.Add(coretest.DeployGVK, "web", nil)
	reg := coretest.TestRegistry(t)
	reader, store := w.Store(t, reg, nil)
	res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), deploy)
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonRoot, res.Reason)
	require.Zero(t, reader.Gets+reader.Lists, "a workload with no controller owner costs no read")
}

// TestOwnerOfUnknownKindIsAGenericRootAsItsReferenceNamesIt: a controller
// owner of a kind no adapter declares, which the controller cannot read, is
// the root as the child's reference names it (kind, name, UID), without a
// read; the kind is noted so that the watches may start reading it.
func TestOwnerOfUnknownKindIsAGenericRootAsItsReferenceNamesIt(t *testing.T) {
	var w coretest.World
	thing := schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"}
	foreign := w.Add(thing, "thing", nil)
	sts := w.Add(coretest.StsGVK, "db", foreign)
	w.Objs = w.Objs[1:] // the foreign owner is not readable at all
	reg := coretest.TestRegistry(t)
	noted := 0
	reg.SetUnknownOwnerHook(func() { noted++ })
	reader, store := w.Store(t, reg, nil)
	walker := graph.Walker{Registry: reg, Store: store}
	res := walker.TrackedOwner(context.Background(), sts)
	require.NotNil(t, res.Owner)
	require.Equal(t, graph.Owner{GroupKind: thing.GroupKind(), Namespace: "ns", Name: "thing", UID: string(foreign.GetUID()),
		Generic: true, Unread: true, APIVersion: "unknown.io/v1"}, *res.Owner)
	require.Equal(t, graph.ReasonUntrackedKind, res.Reason)
	require.Zero(t, reader.Gets, "an owner of a kind nobody declared is not read")
	walker.TrackedOwner(context.Background(), sts)
	require.Equal(t, 1, noted, "the kind is noted once")
	require.Equal(t, []schema.GroupVersionKind{thing}, reg.TakeUnknownOwners())
	require.Empty(t, reg.TakeUnknownOwners())
}

// TestGenericKindIsWalkedThroughToTheTopmostOwner: once the controller reads
// a kind no adapter declares, the walk passes through it (UID-checked) and
// the topmost controller owner is the generic root; a tracked kind above it
// still wins.
func TestGenericKindIsWalkedThroughToTheTopmostOwner(t *testing.T) {
	var w coretest.World
	thing := schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"}
	top := w.Add(thing, "group", nil)
	mid := w.Add(thing, "role", top)
	pod := w.Add(coretest.PodGVK, "worker-0", mid)
	reg := coretest.TestRegistry(t)
	require.NoError(t, reg.AddGenericKind(coretest.Kind("unknown.io", "Thing", "things", "v1", adapter.RoleWalkOnly)))
	_, store := w.Store(t, reg, nil)
	walker := graph.Walker{Registry: reg, Store: store}
	res := walker.TrackedOwner(context.Background(), pod)
	require.NotNil(t, res.Owner)
	require.True(t, res.Owner.Generic)
	require.False(t, res.Owner.Unread)
	require.Equal(t, "group", res.Owner.Name)
	require.Equal(t, string(top.GetUID()), res.Owner.UID)
	require.True(t, walker.IsGenericRoot(top, walker.TrackedOwner(context.Background(), top)))
	require.False(t, walker.IsGenericRoot(mid, walker.TrackedOwner(context.Background(), mid)))

	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), top)
	require.NoError(t, err)
	require.Len(t, d.Pods, 1, "the closure from the generic root reaches the pod through the generic kind")
	require.Empty(t, d.Owned(), "generic intermediates are not listed")
}

// TestBarePodIsItsOwnGenericRoot: a pod nothing controls is a root; a pod
// whose controller is gone (the garbage collector is about to act) is not.
func TestBarePodIsItsOwnGenericRoot(t *testing.T) {
	var w coretest.World
	bare := w.Add(coretest.PodGVK, "notebook", nil)
	rs := w.Add(coretest.RsGVK, "gone", nil)
	orphan := w.Add(coretest.PodGVK, "orphan", rs)
	w.Objs = []client.Object{bare, orphan}
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	walker := graph.Walker{Registry: reg, Store: store}
	require.True(t, walker.IsGenericRoot(bare, walker.TrackedOwner(context.Background(), bare)))
	res := walker.TrackedOwner(context.Background(), orphan)
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonNotFound, res.Reason)
	require.False(t, walker.IsGenericRoot(orphan, res))
	require.True(t, res.Dangling())
	settled := res.Settle()
	require.False(t, settled.Dangling())
	require.True(t, walker.IsGenericRoot(orphan, settled), "past the grace, the pod is the top of its chain")
	require.Equal(t, graph.ReasonNotFound, settled.Reason, "still counted as not found")
}

// A mirror pod is controlled by its Node, a cluster-scoped kind: the chain
// ends below it and the pod is its own root. A cluster-scoped custom kind is
// a generic owner as the reference names it until the controller learns its
// scope (watch.resolveUnknownOwners marks it); from then on it ends the
// chain too. An owner is never looked for outside the pod's namespace.
func TestAClusterScopedOwnerEndsTheChain(t *testing.T) {
	var w coretest.World
	node := w.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "gpu-node-1", nil)
	pool := w.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "GPUPool"}, "pool-a", nil)
	mirror := w.Add(coretest.PodGVK, "vllm-gpu-node-1", node)
	pooled := w.Add(coretest.PodGVK, "vllm-pool-a", pool)
	w.Objs = []client.Object{mirror, pooled}
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	walker := graph.Walker{Registry: reg, Store: store}

	res := walker.TrackedOwner(context.Background(), mirror)
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonUntrackedKind, res.Reason)
	require.True(t, walker.IsGenericRoot(mirror, res), "the mirror pod is its own root")

	res = walker.TrackedOwner(context.Background(), pooled)
	require.NotNil(t, res.Owner, "scope not known yet: a generic owner as the reference names it")
	require.Equal(t, "pool-a", res.Owner.Name)
	require.True(t, res.Owner.Generic && res.Owner.Unread)

	reg.MarkClusterScopedOwner(schema.GroupKind{Group: "example.com", Kind: "GPUPool"})
	res = walker.TrackedOwner(context.Background(), pooled)
	require.Nil(t, res.Owner)
	require.True(t, walker.IsGenericRoot(pooled, res), "known cluster-scoped: the pod is its own root")
}

// TestSettledDanglingWalkEndsAtTheTopmostOwnerRead: a pod whose ReplicaSet
// exists but whose Deployment is gone settles (past the grace) on the
// ReplicaSet as its generic root, not on the pod.
func TestSettledDanglingWalkEndsAtTheTopmostOwnerRead(t *testing.T) {
	var w coretest.World
	gone := w.Add(coretest.DeployGVK, "gone", nil)
	rs := w.Add(coretest.RsGVK, "web-1", gone)
	pod := w.Add(coretest.PodGVK, "web-1-x", rs)
	w.Objs = []client.Object{rs, pod}
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	walker := graph.Walker{Registry: reg, Store: store}
	res := walker.TrackedOwner(context.Background(), pod)
	require.True(t, res.Dangling())
	require.Nil(t, res.Owner)
	require.NotNil(t, res.Top())
	require.Equal(t, "web-1", res.Top().Name)
	settled := res.Settle()
	require.NotNil(t, settled.Owner)
	require.True(t, settled.Owner.Generic)
	require.Equal(t, string(rs.GetUID()), settled.Owner.UID)
	// Settling a walk that is not dangling changes nothing.
	root := walker.TrackedOwner(context.Background(), gone)
	require.Equal(t, root, root.Settle())
}

func TestWalkFailuresMidWalkReportAsRoot(t *testing.T) {
	vaultGR := schema.GroupResource{Group: "other.io", Resource: "vaults"}
	cases := []struct {
		name   string
		err    error
		reason string
	}{
		{"forbidden", apierrors.NewForbidden(vaultGR, "v", nil), graph.ReasonForbidden},
		{"not found", apierrors.NewNotFound(vaultGR, "v"), graph.ReasonNotFound},
		{"no match", &meta.NoKindMatchError{GroupKind: coretest.SecretGVK.GroupKind(), SearchedVersions: []string{"v1"}}, graph.ReasonNoMatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w coretest.World
			widget := w.Add(coretest.WidgetGVK, "graph", nil)
			vault := w.Add(coretest.SecretGVK, "v", widget)
			sts := w.Add(coretest.StsGVK, "db", vault)
			reg := coretest.TestRegistry(t)
			_, store := w.Store(t, reg, &interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if obj.GetObjectKind().GroupVersionKind().Kind == "Vault" {
						return tc.err
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), sts)
			require.Nil(t, res.Owner, "an owner we cannot read must not suppress")
			require.Equal(t, tc.reason, res.Reason)
			require.Equal(t, "Vault.other.io", res.MissKind)
		})
	}
}

func TestUIDMismatchRejectsTheEdge(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	deploy := w.Add(coretest.DeployGVK, "graph-worker", widget)
	// The owner was re-created under the same name: the child's reference
	// carries the old UID.
	refs := deploy.GetOwnerReferences()
	refs[0].UID = types.UID("uid-of-the-deleted-graph")
	deploy.SetOwnerReferences(refs)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), deploy)
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonUIDMismatch, res.Reason)
}

func TestDepthCap(t *testing.T) {
	build := func(gears int) (client.Object, *graph.Registry, graph.Store) {
		var w coretest.World
		parent := w.Add(coretest.WidgetGVK, "root", nil)
		for i := 0; i < gears; i++ {
			parent = w.Add(coretest.GearGVK, "gear"+string(rune('a'+i)), parent)
		}
		sts := w.Add(coretest.StsGVK, "leaf", parent)
		reg := coretest.TestRegistry(t)
		_, store := w.Store(t, reg, nil)
		return sts, reg, store
	}
	// Five walk-only hops, then the Widget at hop 6: found.
	leaf, reg, store := build(5)
	res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), leaf)
	require.NotNil(t, res.Owner)
	require.Equal(t, 6, res.Hops)
	// Six walk-only hops: the Widget would be hop 7, past the cap.
	leaf, reg, store = build(6)
	res = graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), leaf)
	require.Nil(t, res.Owner)
	require.Equal(t, graph.ReasonDepthCap, res.Reason)
	require.Equal(t, coretest.WidgetGVK.GroupKind().String(), res.MissKind, "the kind label's one form: Kind.group")
}

func TestRootClimbsThroughTrackedOwners(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	deploy := w.Add(coretest.DeployGVK, "graph-worker", widget)
	rs := w.Add(coretest.RsGVK, "graph-worker-1", deploy)
	pod := w.Add(coretest.PodGVK, "graph-worker-1-a", rs)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	root := graph.Walker{Registry: reg, Store: store}.Root(context.Background(), pod)
	require.NotNil(t, root)
	require.Equal(t, "graph", root.Name)
	root = graph.Walker{Registry: reg, Store: store}.Root(context.Background(), widget)
	require.Equal(t, "graph", root.Name, "a tracked root is its own root")
}

// The kinds noted as unknown owners are bounded: references naming ever new
// kinds (a tenant writes ownerReferences) cost no more discovery or memory
// past MaxUnknownOwnerKinds; their owners stay unread generic roots.
func TestUnknownOwnerKindsAreBounded(t *testing.T) {
	reg := coretest.TestRegistry(t)
	for i := 0; i < graph.MaxUnknownOwnerKinds+10; i++ {
		reg.NoteUnknownOwner(schema.GroupVersionKind{Group: "flood.example", Version: "v1", Kind: fmt.Sprintf("K%d", i)})
	}
	require.Len(t, reg.TakeUnknownOwners(), graph.MaxUnknownOwnerKinds)
	_, noted := reg.UnknownOwnerVersion(schema.GroupKind{Group: "flood.example", Kind: fmt.Sprintf("K%d", graph.MaxUnknownOwnerKinds+5)})
	require.False(t, noted)
}
