package kserve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/test/crds"
)

// TestCRDsMatchKinds checks that the test CRDs and Kinds() agree on group,
// kind, plural, scope and versions.
func TestCRDsMatchKinds(t *testing.T) {
	crdDir := crds.Dir("kserve")
	loaded := crds.Load(t, crdDir)
	for _, k := range New().Kinds() {
		crd, ok := loaded[k.Group+"/"+k.Kind]
		require.True(t, ok, "no test CRD for %s in %s", k, crdDir)
		delete(loaded, k.Group+"/"+k.Kind)
		crds.Check(t, k, crd)
	}
	require.Empty(t, loaded, "test CRDs for kinds the adapter does not declare")
}
