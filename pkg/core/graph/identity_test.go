package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// The same kind and name in two API groups are two absorbed workloads: the
// owned list names each with its group, sorted, nothing merged (#29 item 2).
func TestOwnedKeepsTheGroupAndNeverMerges(t *testing.T) {
	otherDeploy := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Deployment"}
	reg, err := graph.NewRegistry(
		coretest.TestAdapter{AdapterName: "apps", AdapterKinds: []adapter.Kind{
			coretest.Kind("apps", "Deployment", "deployments", "v1", adapter.RoleTracked),
		}},
		coretest.TestAdapter{AdapterName: "example", AdapterKinds: []adapter.Kind{
			coretest.Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked),
			coretest.Kind("example.com", "Deployment", "deployments", "v1", adapter.RoleTracked),
		}},
	)
	require.NoError(t, err)
	w := &coretest.World{}
	root := w.Add(coretest.WidgetGVK, "graph", nil)
	w.Add(coretest.DeployGVK, "worker", root)
	w.Add(otherDeploy, "worker", root)
	w.Add(coretest.DeployGVK, "a", root)
	desc, err := graph.Closure{Registry: reg, Store: graph.NewMemoryStore(w.Objs)}.Descendants(context.Background(), root)
	require.NoError(t, err)
	require.Len(t, desc.Tracked, 3)
	require.Equal(t, []string{"Deployment.apps/a", "Deployment.apps/worker", "Deployment.example.com/worker"}, desc.Owned())

	for _, s := range desc.Owned() {
		gk, name, ok := graph.ParseOwnedIdentity(s)
		require.True(t, ok, s)
		require.Equal(t, s, graph.OwnedIdentity(gk, name))
	}
	require.Equal(t, "Pod/p", graph.OwnedIdentity(schema.GroupKind{Kind: "Pod"}, "p"), "the core group has no suffix")
	_ = client.Object(root)
}
