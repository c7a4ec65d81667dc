package core

import (
	"testing"

	"github.com/stretchr/testify/require"

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
