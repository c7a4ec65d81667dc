package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

var podWalkOnly = adapter.Kind{Kind: "Pod", Resource: "pods", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly}

// The core names Pod for the running digests, so Pod is registered whatever
// adapters are enabled: batch alone (which declares no Pod) still has it.
func TestRegistryOwnsPodWhateverAdaptersAreEnabled(t *testing.T) {
	for name, adapters := range map[string][]adapter.Adapter{
		"batch only": {batch.New()},
		"none":       nil,
	} {
		t.Run(name, func(t *testing.T) {
			reg, err := graph.NewRegistry(adapters...)
			require.NoError(t, err)
			e, ok := reg.Lookup(graph.PodGroupKind)
			require.True(t, ok, "Pod is part of the ownership graph")
			require.Equal(t, adapter.RoleWalkOnly, e.Role)
			require.Equal(t, graph.CoreAdapterName, e.Adapter.Name())
			require.Equal(t, "v1", e.Version)
			require.Equal(t, "pods", e.Resource)
			require.Len(t, reg.Adapters(), len(adapters), "the core's kinds are not an enabled adapter")
		})
	}
}

// An adapter or plugin built when Pod was the apps adapter's may still
// declare it walk-only: tolerated, the core's declaration stands. Any other
// role, or an adapter taking the core's name, is refused.
func TestRegistryToleratesAWalkOnlyPodAndRefusesAnyOther(t *testing.T) {
	reg, err := graph.NewRegistry(coretest.TestAdapter{AdapterName: "legacy", AdapterKinds: []adapter.Kind{podWalkOnly}})
	require.NoError(t, err)
	e, ok := reg.Lookup(graph.PodGroupKind)
	require.True(t, ok)
	require.Equal(t, graph.CoreAdapterName, e.Adapter.Name())

	// Two adapters may both carry the old declaration.
	_, err = graph.NewRegistry(coretest.TestAdapter{AdapterName: "a", AdapterKinds: []adapter.Kind{podWalkOnly}}, coretest.TestAdapter{AdapterName: "b", AdapterKinds: []adapter.Kind{podWalkOnly}})
	require.NoError(t, err)

	tracked := podWalkOnly
	tracked.Role = adapter.RoleTracked
	_, err = graph.NewRegistry(coretest.TestAdapter{AdapterName: "pods", AdapterKinds: []adapter.Kind{tracked}})
	require.ErrorContains(t, err, `adapter "pods" declares Pod as a tracked kind; Pod is the core's own walk-only kind`)

	_, err = graph.NewRegistry(coretest.TestAdapter{AdapterName: graph.CoreAdapterName, AdapterKinds: []adapter.Kind{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1"}, Role: adapter.RoleTracked}}})
	require.ErrorContains(t, err, `adapter name "core" is reserved`)
}

func TestWalkOnlyKindsAreSharedAndTakenOverByATracker(t *testing.T) {
	knative := coretest.Kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleWalkOnly)
	kserve := coretest.TestAdapter{AdapterName: "kserve", AdapterKinds: []adapter.Kind{knative}}
	other := coretest.TestAdapter{AdapterName: "other", AdapterKinds: []adapter.Kind{knative}}
	gk := schema.GroupKind{Group: "serving.knative.dev", Kind: "Service"}

	reg, err := graph.NewRegistry(kserve, other)
	require.NoError(t, err, "two walk-only declarations of one kind are not a conflict")
	e, ok := reg.Lookup(gk)
	require.True(t, ok)
	require.Equal(t, adapter.RoleWalkOnly, e.Role)

	tracker := coretest.TestAdapter{AdapterName: "knative", AdapterKinds: []adapter.Kind{coretest.Kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleTracked)}}
	for _, order := range [][]adapter.Adapter{{kserve, tracker}, {tracker, kserve}} {
		reg, err := graph.NewRegistry(order...)
		require.NoError(t, err)
		e, _ := reg.Lookup(gk)
		require.Equal(t, adapter.RoleTracked, e.Role, "the tracking adapter takes the kind over whatever the order")
		require.Equal(t, "knative", e.Adapter.Name())
	}

	_, err = graph.NewRegistry(tracker, coretest.TestAdapter{AdapterName: "again", AdapterKinds: tracker.AdapterKinds})
	require.ErrorContains(t, err, "claimed by both")
	_, err = graph.NewRegistry(kserve, coretest.TestAdapter{AdapterName: "ref", AdapterKinds: []adapter.Kind{coretest.Kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleReferenced)}})
	require.ErrorContains(t, err, "claimed by both", "walk-only and referenced do not mix")
}

func TestSetAdaptersReplacesTheKindsAtomically(t *testing.T) {
	reg := coretest.TestRegistry(t)
	before := len(reg.AllEntries())
	require.NoError(t, reg.SetServedVersion(coretest.DeployGVK.GroupKind(), "v1"))
	base := reg.Adapters()

	widgets := coretest.TestAdapter{AdapterName: "gadgets", AdapterKinds: []adapter.Kind{coretest.Kind("gadgets.example.com", "Gadget", "gadgets", "v1", adapter.RoleTracked)}}
	added, changed, removed, err := reg.SetAdapters(append(base, widgets)...)
	require.NoError(t, err)
	require.Equal(t, []schema.GroupKind{{Group: "gadgets.example.com", Kind: "Gadget"}}, added)
	require.Empty(t, removed)
	// The test adapters hold slices: they cannot be compared, so their kinds
	// count as changed (replayed), never as unchanged by mistake.
	require.NotEmpty(t, changed)
	require.True(t, reg.IsTracked(schema.GroupKind{Group: "gadgets.example.com", Kind: "Gadget"}))
	require.Len(t, reg.AllEntries(), before+1)

	// A conflicting set changes nothing.
	_, _, _, err = reg.SetAdapters(append(base, widgets, coretest.TestAdapter{AdapterName: "dup", AdapterKinds: widgets.AdapterKinds})...)
	require.Error(t, err)
	require.Len(t, reg.AllEntries(), before+1)

	_, _, removed, err = reg.SetAdapters(base...)
	require.NoError(t, err)
	require.Equal(t, []schema.GroupKind{{Group: "gadgets.example.com", Kind: "Gadget"}}, removed)
	require.False(t, reg.Registered(schema.GroupKind{Group: "gadgets.example.com", Kind: "Gadget"}))
	e, _ := reg.Lookup(coretest.DeployGVK.GroupKind())
	require.Equal(t, "v1", e.Version, "a kind that stays keeps its served version")
}

// Entries is memoized; every change of the registry shows in the next call:
// a served version, an adapter turned off, a generic kind, a new adapter set.
func TestEntriesFollowEveryChange(t *testing.T) {
	reg := coretest.TestRegistry(t)
	find := func(gk schema.GroupKind) (graph.Entry, bool) {
		for _, e := range reg.Entries() {
			if e.GroupKind() == gk {
				return e, true
			}
		}
		return graph.Entry{}, false
	}
	deploy := coretest.DeployGVK.GroupKind()
	e, ok := find(deploy)
	require.True(t, ok)
	versions := e.Versions
	require.NotEmpty(t, versions)
	last := versions[len(versions)-1]
	require.NoError(t, reg.SetServedVersion(deploy, last))
	e, _ = find(deploy)
	require.Equal(t, last, e.Version, "a served version chosen after the first call shows")

	widget := schema.GroupKind{Group: "widgets.example.com", Kind: "Widget"}
	_, ok = find(widget)
	require.False(t, ok)
	require.NoError(t, reg.AddGenericKind(coretest.Kind("widgets.example.com", "Widget", "widgets", "v1", adapter.RoleWalkOnly)))
	_, ok = find(widget)
	require.True(t, ok, "a generic kind added after the first call shows")

	require.NoError(t, reg.SetEnabled([]string{}))
	for _, e := range reg.Entries() {
		require.NotEqual(t, deploy, e.GroupKind(), "a kind of an adapter turned off is gone")
	}
	require.NoError(t, reg.SetEnabled(nil))
	_, ok = find(deploy)
	require.True(t, ok, "and back once it is on again")

	gadget := coretest.TestAdapter{AdapterName: "gadgets", AdapterKinds: []adapter.Kind{coretest.Kind("gadgets.example.com", "Gadget", "gadgets", "v1", adapter.RoleTracked)}}
	_, _, _, err := reg.SetAdapters(append(reg.Adapters(), gadget)...)
	require.NoError(t, err)
	_, ok = find(schema.GroupKind{Group: "gadgets.example.com", Kind: "Gadget"})
	require.True(t, ok, "an adapter set replaced after the first call shows")
}
