package nim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/test/crds"
)

// TestCRDsMatchKinds checks that the test CRDs and Kinds() agree on group,
// kind, plural, scope and versions, so that fixtures and adapter cannot
// drift apart.
func TestCRDsMatchKinds(t *testing.T) {
	crdDir := crds.Dir("nim")
	loaded := crds.Load(t, crdDir)
	for _, k := range New().Kinds() {
		crd, ok := loaded[k.Group+"/"+k.Kind]
		require.True(t, ok, "no test CRD for %s in %s", k, crdDir)
		delete(loaded, k.Group+"/"+k.Kind)
		crds.Check(t, k, crd)
	}
	// NIMCache is installed for fixtures that reference a cache by name
	// (spec.storage.nimCache.name); the adapter does not declare it.
	for gk, k := range undeclared {
		crd, ok := loaded[gk]
		require.True(t, ok, "no test CRD for %s in %s", k, crdDir)
		delete(loaded, gk)
		crds.Check(t, k, crd)
	}
	require.Empty(t, loaded, "test CRDs for kinds the adapter does not declare")
}

// undeclared are the test CRDs of kinds the adapter knows of but does not
// declare, with the shape their CRD must have.
var undeclared = map[string]adapter.Kind{
	Group + "/NIMCache": {Group: Group, Kind: "NIMCache", Resource: "nimcaches", Versions: []string{"v1alpha1"}},
}
