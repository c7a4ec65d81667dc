package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestTrackedOwnerAtHopOne(t *testing.T) {
	var w world
	deploy := w.add(deployGVK, "web", nil)
	rs := w.add(rsGVK, "web-1", deploy)
	w.add(podGVK, "web-1-a", rs)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)

	// A Deployment owned by a Widget: suppressed at hop 1.
	var w2 world
	widget := w2.add(widgetGVK, "graph", nil)
	owned := w2.add(deployGVK, "graph-worker", widget)
	_, store2 := w2.store(t, reg, nil)
	res := Walker{Registry: reg, Store: store2}.TrackedOwner(context.Background(), owned)
	require.NotNil(t, res.Owner)
	require.Equal(t, "graph", res.Owner.Name)
	require.Equal(t, schema.GroupKind{Group: "example.com", Kind: "Widget"}, res.Owner.GroupKind)
	require.Equal(t, 1, res.Hops)

	// A ReplicaSet's walk reaches its Deployment at hop 1 too.
	res = Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), rs)
	require.NotNil(t, res.Owner)
	require.Equal(t, "web", res.Owner.Name)
}

func TestTrackedOwnerAtHopThree(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "graph", nil)
	gear := w.add(gearGVK, "graph-gear", widget)
	rs := w.add(rsGVK, "graph-gear-rs", gear)
	pod := w.add(podGVK, "graph-gear-rs-a", rs)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), pod)
	require.NotNil(t, res.Owner)
	require.Equal(t, "graph", res.Owner.Name)
	require.Equal(t, 3, res.Hops)
}

func TestUntrackedRootCostsNoRead(t *testing.T) {
	var w world
	deploy := w.add(deployGVK, "web", nil)
	reg := testRegistry(t)
	reader, store := w.store(t, reg, nil)
	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), deploy)
	require.Nil(t, res.Owner)
	require.Equal(t, ReasonRoot, res.Reason)
	require.Zero(t, reader.gets+reader.lists, "a workload with no controller owner costs no read")
}

func TestOwnerOfUnknownKindIsUntracked(t *testing.T) {
	var w world
	foreign := w.add(schema.GroupVersionKind{Group: "unknown.io", Version: "v1", Kind: "Thing"}, "thing", nil)
	sts := w.add(stsGVK, "db", foreign)
	w.objs = w.objs[1:] // the foreign owner is not readable at all
	reg := testRegistry(t)
	reader, store := w.store(t, reg, nil)
	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), sts)
	require.Nil(t, res.Owner)
	require.Equal(t, ReasonUntrackedKind, res.Reason)
	require.Zero(t, reader.gets, "an owner of a kind nobody declared is not read")
}

func TestWalkFailuresMidWalkReportAsRoot(t *testing.T) {
	vaultGR := schema.GroupResource{Group: "other.io", Resource: "vaults"}
	cases := []struct {
		name   string
		err    error
		reason string
	}{
		{"forbidden", apierrors.NewForbidden(vaultGR, "v", nil), ReasonForbidden},
		{"not found", apierrors.NewNotFound(vaultGR, "v"), ReasonNotFound},
		{"no match", &meta.NoKindMatchError{GroupKind: secretGVK.GroupKind(), SearchedVersions: []string{"v1"}}, ReasonNoMatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w world
			widget := w.add(widgetGVK, "graph", nil)
			vault := w.add(secretGVK, "v", widget)
			sts := w.add(stsGVK, "db", vault)
			reg := testRegistry(t)
			_, store := w.store(t, reg, &interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if obj.GetObjectKind().GroupVersionKind().Kind == "Vault" {
						return tc.err
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), sts)
			require.Nil(t, res.Owner, "an owner we cannot read must not suppress")
			require.Equal(t, tc.reason, res.Reason)
			require.Equal(t, "Vault.other.io", res.MissKind)
		})
	}
}

func TestUIDMismatchRejectsTheEdge(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "graph", nil)
	deploy := w.add(deployGVK, "graph-worker", widget)
	// The owner was re-created under the same name: the child's reference
	// carries the old UID.
	refs := deploy.GetOwnerReferences()
	refs[0].UID = types.UID("uid-of-the-deleted-graph")
	deploy.SetOwnerReferences(refs)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), deploy)
	require.Nil(t, res.Owner)
	require.Equal(t, ReasonUIDMismatch, res.Reason)
}

func TestDepthCap(t *testing.T) {
	build := func(gears int) (client.Object, *Registry, Store) {
		var w world
		parent := w.add(widgetGVK, "root", nil)
		for i := 0; i < gears; i++ {
			parent = w.add(gearGVK, "gear"+string(rune('a'+i)), parent)
		}
		sts := w.add(stsGVK, "leaf", parent)
		reg := testRegistry(t)
		_, store := w.store(t, reg, nil)
		return sts, reg, store
	}
	// Five walk-only hops, then the Widget at hop 6: found.
	leaf, reg, store := build(5)
	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), leaf)
	require.NotNil(t, res.Owner)
	require.Equal(t, 6, res.Hops)
	// Six walk-only hops: the Widget would be hop 7, past the cap.
	leaf, reg, store = build(6)
	res = Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), leaf)
	require.Nil(t, res.Owner)
	require.Equal(t, ReasonDepthCap, res.Reason)
	require.Equal(t, widgetGVK.GroupKind().String(), res.MissKind, "the kind label's one form: Kind.group")
}

func TestRootClimbsThroughTrackedOwners(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "graph", nil)
	deploy := w.add(deployGVK, "graph-worker", widget)
	rs := w.add(rsGVK, "graph-worker-1", deploy)
	pod := w.add(podGVK, "graph-worker-1-a", rs)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	root := Walker{Registry: reg, Store: store}.Root(context.Background(), pod)
	require.NotNil(t, root)
	require.Equal(t, "graph", root.Name)
	root = Walker{Registry: reg, Store: store}.Root(context.Background(), widget)
	require.Equal(t, "graph", root.Name, "a tracked root is its own root")
}
