package grove

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/test/crds"
)

func TestKinds(t *testing.T) {
	a := New()
	require.Equal(t, "grove", a.Name())
	var got []string
	for _, k := range a.Kinds() {
		require.NoError(t, k.Validate())
		require.Equal(t, adapter.RoleWalkOnly, k.Role)
		require.Equal(t, []string{"v1alpha1"}, k.Versions)
		got = append(got, k.String()+"/"+k.Resource)
	}
	require.Equal(t, []string{
		"PodCliqueSet.grove.io/podcliquesets",
		"PodCliqueScalingGroup.grove.io/podcliquescalinggroups",
		"PodClique.grove.io/podcliques",
	}, got)
	// PodGang and ClusterTopologyBinding are not ownership edges.
	for _, k := range a.Kinds() {
		require.NotContains(t, []string{"PodGang", "ClusterTopologyBinding", "PodGangSet"}, k.Kind)
	}
	ks := a.Kinds()
	ks[0].Versions[0] = "v9"
	require.Equal(t, "v1alpha1", a.Kinds()[0].Versions[0])
}

func TestScrapeIsWalkOnly(t *testing.T) {
	for _, obj := range []*unstructured.Unstructured{
		nil,
		{Object: map[string]any{"apiVersion": "grove.io/v1alpha1", "kind": "PodClique"}},
	} {
		f, err := New().Scrape(context.Background(), obj)
		require.ErrorIs(t, err, ErrWalkOnly)
		require.ErrorContains(t, err, "grove kinds are walk-only")
		require.Equal(t, adapter.Findings{}, f)
	}
}

// TestCRDsMatchKinds keeps test/crds/grove and Kinds() in step: one CRD
// per kind, with the same group, kind, plural, scope and versions.
func TestCRDsMatchKinds(t *testing.T) {
	loaded := crds.Load(t, crds.Dir("grove"))
	shortNames := map[string]string{"PodCliqueSet": "pcs", "PodClique": "pclq", "PodCliqueScalingGroup": "pcsg"}
	require.Len(t, loaded, len(New().Kinds()))
	for _, k := range New().Kinds() {
		crd, ok := loaded[k.Group+"/"+k.Kind]
		require.True(t, ok, "no CRD for %s", k)
		require.Equal(t, []string{shortNames[k.Kind]}, crd.Spec.Names.ShortNames)
		crds.Check(t, k, crd)
		for _, v := range crd.Spec.Versions {
			require.NotNil(t, v.Subresources.Scale)
			require.Equal(t, ".spec.replicas", v.Subresources.Scale.SpecReplicasPath)
		}
	}
}
