package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

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
