package graph_test

import (
	"context"
	"testing"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestClosureThroughReplicaSet(t *testing.T) {
	var w coretest.World
	deploy := w.Add(coretest.DeployGVK, "web", nil)
	rs := w.Add(coretest.RsGVK, "web-1", deploy)
	w.Add(coretest.PodGVK, "web-1-a", rs)
	w.Add(coretest.PodGVK, "web-1-b", rs)
	other := w.Add(coretest.DeployGVK, "other", nil)
	w.Add(coretest.PodGVK, "other-a", w.Add(coretest.RsGVK, "other-1", other))
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), deploy)
	require.NoError(t, err)
	owned, pods := coretest.Names(d)
	require.Empty(t, owned, "walk-only kinds are never listed")
	require.Equal(t, []string{"web-1-a", "web-1-b"}, pods)
}

func TestClosureThroughUnstructuredIntermediate(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	gear := w.Add(coretest.GearGVK, "graph-gear", widget)
	w.Add(coretest.PodGVK, "graph-gear-a", gear)
	deploy := w.Add(coretest.DeployGVK, "graph-frontend", widget)
	w.Add(coretest.PodGVK, "graph-frontend-1-a", w.Add(coretest.RsGVK, "graph-frontend-1", deploy))
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	owned, pods := coretest.Names(d)
	require.Equal(t, []string{"Deployment.apps/graph-frontend"}, owned)
	require.Equal(t, []string{"graph-frontend-1-a", "graph-gear-a"}, pods)
}

// The LeaderWorkerSet shape: the worker StatefulSet is controlled by the
// leader Pod.
func TestClosureThroughPodIntermediate(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "lws", nil)
	leaders := w.Add(coretest.StsGVK, "lws", widget)
	leader := w.Add(coretest.PodGVK, "lws-0", leaders)
	workers := w.Add(coretest.StsGVK, "lws-0", leader)
	w.Add(coretest.PodGVK, "lws-0-1", workers)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	owned, pods := coretest.Names(d)
	require.Equal(t, []string{"StatefulSet.apps/lws", "StatefulSet.apps/lws-0"}, owned)
	require.Equal(t, []string{"lws-0", "lws-0-1"}, pods)

	res := graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), workers)
	require.NotNil(t, res.Owner)
	require.Equal(t, "lws", res.Owner.Name, "the worker StatefulSet's tracked owner is the leader StatefulSet")
}

func TestClosureIgnoresForgedReferences(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	// Right UID, wrong name: the walk rejects this edge, so must the closure.
	forged := w.Add(coretest.DeployGVK, "forged", widget)
	refs := forged.GetOwnerReferences()
	refs[0].Name = "someone-else"
	forged.SetOwnerReferences(refs)
	// Right name, stale UID (owner re-created): never adopted.
	stale := w.Add(coretest.DeployGVK, "stale", widget)
	refs = stale.GetOwnerReferences()
	refs[0].UID = types.UID("uid-of-the-previous-graph")
	stale.SetOwnerReferences(refs)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	require.Empty(t, d.Owned())
	for _, o := range []string{"forged", "stale"} {
		obj := forged
		if o == "stale" {
			obj = stale
		}
		require.Nil(t, graph.Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), obj).Owner)
	}
}

func TestClosureRespectsTheDepthCap(t *testing.T) {
	var w coretest.World
	root := w.Add(coretest.WidgetGVK, "root", nil)
	parent := root
	for i := 0; i < 6; i++ {
		parent = w.Add(coretest.GearGVK, "gear"+string(rune('a'+i)), parent)
	}
	w.Add(coretest.StsGVK, "too-deep", parent)
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	d, err := graph.Closure{Registry: reg, Store: store}.Descendants(context.Background(), root)
	require.NoError(t, err)
	require.Empty(t, d.Owned(), "the walk from too-deep stops at the cap, so the closure must not list it")
}

// wholeReads counts the whole-object reads of each kind a store answers
// (ControlledBy); its metadata reads (MetadataReader) are not counted.
type wholeReads struct {
	graph.Store
	reads map[string]int
}

func (s wholeReads) ControlledBy(ctx context.Context, e graph.Entry, ns string, uid types.UID) ([]client.Object, error) {
	s.reads[e.Kind.Kind]++
	return s.Store.ControlledBy(ctx, e, ns, uid)
}

func (s wholeReads) GetMetadata(ctx context.Context, e graph.Entry, ns, name string) (client.Object, error) {
	return s.Store.Get(ctx, e, ns, name)
}

func (s wholeReads) ControlledByMetadata(ctx context.Context, e graph.Entry, ns string, uid types.UID) ([]client.Object, error) {
	return s.Store.ControlledBy(ctx, e, ns, uid)
}

// A closure for its tracked descendants alone (the event mapper's) finds the
// same ones, through pods that control workloads too, without reading a pod
// whole; a full closure reads them whole.
func TestClosureTrackedOnlyReadsNoPodWhole(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "lws", nil)
	leaders := w.Add(coretest.StsGVK, "lws", widget)
	leader := w.Add(coretest.PodGVK, "lws-0", leaders)
	w.Add(coretest.PodGVK, "lws-0-1", w.Add(coretest.StsGVK, "lws-0", leader))
	reg := coretest.TestRegistry(t)
	_, store := w.Store(t, reg, nil)
	full := wholeReads{Store: store, reads: map[string]int{}}
	want, err := graph.Closure{Registry: reg, Store: full}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	require.NotZero(t, full.reads["Pod"])

	only := wholeReads{Store: store, reads: map[string]int{}}
	got, err := graph.Closure{Registry: reg, Store: only, TrackedOnly: true}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	require.Zero(t, only.reads["Pod"], "no pod read whole")
	wantOwned, _ := coretest.Names(want)
	gotOwned, gotPods := coretest.Names(got)
	require.Equal(t, []string{"StatefulSet.apps/lws", "StatefulSet.apps/lws-0"}, gotOwned)
	require.Equal(t, wantOwned, gotOwned)
	require.Empty(t, gotPods)
}
