package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func names(d Descendants) (owned []string, pods []string) {
	for _, p := range d.Pods {
		pods = append(pods, p.GetName())
	}
	return d.Owned(), pods
}

func TestClosureThroughReplicaSet(t *testing.T) {
	var w world
	deploy := w.add(deployGVK, "web", nil)
	rs := w.add(rsGVK, "web-1", deploy)
	w.add(podGVK, "web-1-a", rs)
	w.add(podGVK, "web-1-b", rs)
	other := w.add(deployGVK, "other", nil)
	w.add(podGVK, "other-a", w.add(rsGVK, "other-1", other))
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	d, err := Closure{Registry: reg, Store: store}.Descendants(context.Background(), deploy)
	require.NoError(t, err)
	owned, pods := names(d)
	require.Empty(t, owned, "walk-only kinds are never listed")
	require.Equal(t, []string{"web-1-a", "web-1-b"}, pods)
}

func TestClosureThroughUnstructuredIntermediate(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "graph", nil)
	gear := w.add(gearGVK, "graph-gear", widget)
	w.add(podGVK, "graph-gear-a", gear)
	deploy := w.add(deployGVK, "graph-frontend", widget)
	w.add(podGVK, "graph-frontend-1-a", w.add(rsGVK, "graph-frontend-1", deploy))
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	d, err := Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	owned, pods := names(d)
	require.Equal(t, []string{"Deployment/graph-frontend"}, owned)
	require.Equal(t, []string{"graph-frontend-1-a", "graph-gear-a"}, pods)
}

// The LeaderWorkerSet shape: the worker StatefulSet is controlled by the
// leader Pod.
func TestClosureThroughPodIntermediate(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "lws", nil)
	leaders := w.add(stsGVK, "lws", widget)
	leader := w.add(podGVK, "lws-0", leaders)
	workers := w.add(stsGVK, "lws-0", leader)
	w.add(podGVK, "lws-0-1", workers)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	d, err := Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	owned, pods := names(d)
	require.Equal(t, []string{"StatefulSet/lws", "StatefulSet/lws-0"}, owned)
	require.Equal(t, []string{"lws-0", "lws-0-1"}, pods)

	res := Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), workers)
	require.NotNil(t, res.Owner)
	require.Equal(t, "lws", res.Owner.Name, "the worker StatefulSet's tracked owner is the leader StatefulSet")
}

func TestClosureIgnoresForgedReferences(t *testing.T) {
	var w world
	widget := w.add(widgetGVK, "graph", nil)
	// Right UID, wrong name: the walk rejects this edge, so must the closure.
	forged := w.add(deployGVK, "forged", widget)
	refs := forged.GetOwnerReferences()
	refs[0].Name = "someone-else"
	forged.SetOwnerReferences(refs)
	// Right name, stale UID (owner re-created): never adopted.
	stale := w.add(deployGVK, "stale", widget)
	refs = stale.GetOwnerReferences()
	refs[0].UID = types.UID("uid-of-the-previous-graph")
	stale.SetOwnerReferences(refs)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	d, err := Closure{Registry: reg, Store: store}.Descendants(context.Background(), widget)
	require.NoError(t, err)
	require.Empty(t, d.Owned())
	for _, o := range []string{"forged", "stale"} {
		obj := forged
		if o == "stale" {
			obj = stale
		}
		require.Nil(t, Walker{Registry: reg, Store: store}.TrackedOwner(context.Background(), obj).Owner)
	}
}

func TestClosureRespectsTheDepthCap(t *testing.T) {
	var w world
	root := w.add(widgetGVK, "root", nil)
	parent := root
	for i := 0; i < 6; i++ {
		parent = w.add(gearGVK, "gear"+string(rune('a'+i)), parent)
	}
	w.add(stsGVK, "too-deep", parent)
	reg := testRegistry(t)
	_, store := w.store(t, reg, nil)
	d, err := Closure{Registry: reg, Store: store}.Descendants(context.Background(), root)
	require.NoError(t, err)
	require.Empty(t, d.Owned(), "the walk from too-deep stops at the cap, so the closure must not list it")
}
