package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/adapter"
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
			reg, err := NewRegistry(adapters...)
			require.NoError(t, err)
			e, ok := reg.Lookup(PodGroupKind)
			require.True(t, ok, "Pod is part of the ownership graph")
			require.Equal(t, adapter.RoleWalkOnly, e.Role)
			require.Equal(t, CoreAdapterName, e.Adapter.Name())
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
	reg, err := NewRegistry(testAdapter{name: "legacy", kinds: []adapter.Kind{podWalkOnly}})
	require.NoError(t, err)
	e, ok := reg.Lookup(PodGroupKind)
	require.True(t, ok)
	require.Equal(t, CoreAdapterName, e.Adapter.Name())

	// Two adapters may both carry the old declaration.
	_, err = NewRegistry(testAdapter{name: "a", kinds: []adapter.Kind{podWalkOnly}}, testAdapter{name: "b", kinds: []adapter.Kind{podWalkOnly}})
	require.NoError(t, err)

	tracked := podWalkOnly
	tracked.Role = adapter.RoleTracked
	_, err = NewRegistry(testAdapter{name: "pods", kinds: []adapter.Kind{tracked}})
	require.ErrorContains(t, err, `adapter "pods" declares Pod as a tracked kind; Pod is the core's own walk-only kind`)

	_, err = NewRegistry(testAdapter{name: CoreAdapterName, kinds: []adapter.Kind{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1"}, Role: adapter.RoleTracked}}})
	require.ErrorContains(t, err, `adapter name "core" is reserved`)
}

func TestWalkOnlyKindsAreSharedAndTakenOverByATracker(t *testing.T) {
	knative := kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleWalkOnly)
	kserve := testAdapter{name: "kserve", kinds: []adapter.Kind{knative}}
	other := testAdapter{name: "other", kinds: []adapter.Kind{knative}}
	gk := schema.GroupKind{Group: "serving.knative.dev", Kind: "Service"}

	reg, err := NewRegistry(kserve, other)
	require.NoError(t, err, "two walk-only declarations of one kind are not a conflict")
	e, ok := reg.Lookup(gk)
	require.True(t, ok)
	require.Equal(t, adapter.RoleWalkOnly, e.Role)

	tracker := testAdapter{name: "knative", kinds: []adapter.Kind{kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleTracked)}}
	for _, order := range [][]adapter.Adapter{{kserve, tracker}, {tracker, kserve}} {
		reg, err := NewRegistry(order...)
		require.NoError(t, err)
		e, _ := reg.Lookup(gk)
		require.Equal(t, adapter.RoleTracked, e.Role, "the tracking adapter takes the kind over whatever the order")
		require.Equal(t, "knative", e.Adapter.Name())
	}

	_, err = NewRegistry(tracker, testAdapter{name: "again", kinds: tracker.kinds})
	require.ErrorContains(t, err, "claimed by both")
	_, err = NewRegistry(kserve, testAdapter{name: "ref", kinds: []adapter.Kind{kind("serving.knative.dev", "Service", "services", "v1", adapter.RoleReferenced)}})
	require.ErrorContains(t, err, "claimed by both", "walk-only and referenced do not mix")
}

func TestSetAdaptersReplacesTheKindsAtomically(t *testing.T) {
	reg := testRegistry(t)
	before := len(reg.AllEntries())
	require.NoError(t, reg.SetServedVersion(deployGVK.GroupKind(), "v1"))
	base := reg.Adapters()

	widgets := testAdapter{name: "gadgets", kinds: []adapter.Kind{kind("gadgets.example.com", "Gadget", "gadgets", "v1", adapter.RoleTracked)}}
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
	_, _, _, err = reg.SetAdapters(append(base, widgets, testAdapter{name: "dup", kinds: widgets.kinds})...)
	require.Error(t, err)
	require.Len(t, reg.AllEntries(), before+1)

	_, _, removed, err = reg.SetAdapters(base...)
	require.NoError(t, err)
	require.Equal(t, []schema.GroupKind{{Group: "gadgets.example.com", Kind: "Gadget"}}, removed)
	require.False(t, reg.Registered(schema.GroupKind{Group: "gadgets.example.com", Kind: "Gadget"}))
	e, _ := reg.Lookup(deployGVK.GroupKind())
	require.Equal(t, "v1", e.Version, "a kind that stays keeps its served version")
}
