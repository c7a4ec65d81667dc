package dynamo

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/test/crds"
)

// TestCRDsMatchKinds keeps test/crds/dynamo and Kinds() in step. Without a
// conversion webhook, envtest cannot serve both versions of one kind, so
// there is one folder per version, each serving (and storing) only that
// version, with one CRD per kind of the adapter.
func TestCRDsMatchKinds(t *testing.T) {
	shortNames := map[string]string{KindGraph: "dgd", KindComponent: "dcd"}
	kinds := New().Kinds()
	for _, version := range []string{V1alpha1, V1beta1} {
		t.Run(version, func(t *testing.T) {
			loaded := crds.Load(t, crds.Dir(filepath.Join("dynamo", version)))
			require.Len(t, loaded, len(kinds))
			for _, k := range kinds {
				crd, ok := loaded[k.Group+"/"+k.Kind]
				require.True(t, ok, "no CRD for %s", k)
				require.Equal(t, []string{shortNames[k.Kind]}, crd.Spec.Names.ShortNames)
				require.Contains(t, k.Versions, version)
				// This folder serves and stores this one version only.
				served := k
				served.Versions = []string{version}
				crds.Check(t, served, crd)
			}
		})
	}
}
