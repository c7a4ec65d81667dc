package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// metadataStore answers MetadataReader's reads with metadata-only copies and
// counts every read by method and kind.
type metadataStore struct {
	graph.Store
	reads map[string]int
}

func (m *metadataStore) count(method string, e graph.Entry) { m.reads[method+" "+e.Kind.Kind]++ }

func (m *metadataStore) Get(ctx context.Context, e graph.Entry, ns, name string) (client.Object, error) {
	m.count("Get", e)
	return m.Store.Get(ctx, e, ns, name)
}

func (m *metadataStore) ControlledBy(ctx context.Context, e graph.Entry, ns string, uid types.UID) ([]client.Object, error) {
	m.count("ControlledBy", e)
	return m.Store.ControlledBy(ctx, e, ns, uid)
}

func metadataOnly(obj client.Object) client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	m.SetNamespace(obj.GetNamespace())
	m.SetName(obj.GetName())
	m.SetUID(obj.GetUID())
	m.SetOwnerReferences(obj.GetOwnerReferences())
	return m
}

func (m *metadataStore) GetMetadata(ctx context.Context, e graph.Entry, ns, name string) (client.Object, error) {
	m.count("GetMetadata", e)
	obj, err := m.Store.Get(ctx, e, ns, name)
	if err != nil {
		return nil, err
	}
	return metadataOnly(obj), nil
}

func (m *metadataStore) ControlledByMetadata(ctx context.Context, e graph.Entry, ns string, uid types.UID) ([]client.Object, error) {
	m.count("ControlledByMetadata", e)
	objs, err := m.Store.ControlledBy(ctx, e, ns, uid)
	for i := range objs {
		objs[i] = metadataOnly(objs[i])
	}
	return objs, err
}

// The walk and the closure read only metadata: a store that can answer
// with metadata alone is asked for it, everywhere but for pods (their status
// gives the digests), and the answers are those of whole objects.
func TestWalkAndClosureReadMetadataWhereTheStoreOffersIt(t *testing.T) {
	var w coretest.World
	widget := w.Add(coretest.WidgetGVK, "graph", nil)
	gear := w.Add(coretest.GearGVK, "gear", widget)
	deploy := w.Add(coretest.DeployGVK, "web", gear)
	rs := w.Add(coretest.RsGVK, "web-1", deploy)
	pod := w.Add(coretest.PodGVK, "web-1-a", rs)
	reg := coretest.TestRegistry(t)
	_, plain := w.Store(t, reg, nil)
	meta := &metadataStore{Store: plain, reads: map[string]int{}}
	ctx := context.Background()

	for _, store := range []graph.Store{plain, meta} {
		walk := graph.Walker{Registry: reg, Store: store}.TrackedOwner(ctx, deploy)
		require.NotNil(t, walk.Owner)
		require.Equal(t, "graph", walk.Owner.Name)
		require.Equal(t, "graph", graph.Walker{Registry: reg, Store: store}.Root(ctx, pod).Name)

		d, err := graph.Closure{Registry: reg, Store: store}.Descendants(ctx, widget)
		require.NoError(t, err)
		require.Equal(t, []string{"Deployment.apps/web"}, d.Owned())
		require.Len(t, d.Pods, 1, "pods are read whole")
		require.Equal(t, "web-1-a", d.Pods[0].GetName())
	}
	for read, n := range meta.reads {
		switch read {
		case "ControlledBy Pod":
		case "Get Pod", "Get Deployment", "Get Widget", "Get Gear", "Get ReplicaSet", "ControlledBy Deployment", "ControlledBy Gear", "ControlledBy ReplicaSet", "ControlledBy Widget":
			t.Errorf("%s read whole %d times; the walk and the closure need its metadata only", read, n)
		}
	}
	require.Positive(t, meta.reads["GetMetadata Gear"])
	require.Positive(t, meta.reads["ControlledByMetadata Deployment"])
	require.Positive(t, meta.reads["ControlledBy Pod"])
}
