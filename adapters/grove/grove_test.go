package grove

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
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
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "crds", "grove", "*.yaml"))
	require.NoError(t, err)
	crds := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.UnmarshalStrict(b, &crd), file)
		require.Equal(t, "CustomResourceDefinition", crd.Kind, file)
		require.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion, file)
		crds[crd.Spec.Names.Kind] = crd
	}
	shortNames := map[string]string{"PodCliqueSet": "pcs", "PodClique": "pclq", "PodCliqueScalingGroup": "pcsg"}
	require.Len(t, crds, len(New().Kinds()))
	for _, k := range New().Kinds() {
		crd, ok := crds[k.Kind]
		require.True(t, ok, "no CRD for %s", k)
		require.Equal(t, k.Resource+"."+k.Group, crd.Name)
		require.Equal(t, k.Group, crd.Spec.Group)
		require.Equal(t, k.Resource, crd.Spec.Names.Plural)
		require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
		require.Equal(t, []string{shortNames[k.Kind]}, crd.Spec.Names.ShortNames)
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, v.Name)
			require.True(t, v.Served)
			require.True(t, v.Storage)
			require.NotNil(t, v.Subresources)
			require.NotNil(t, v.Subresources.Status)
			require.NotNil(t, v.Subresources.Scale)
			require.Equal(t, ".spec.replicas", v.Subresources.Scale.SpecReplicasPath)
			props := v.Schema.OpenAPIV3Schema.Properties
			for _, field := range []string{"spec", "status"} {
				require.Equal(t, "object", props[field].Type)
				require.NotNil(t, props[field].XPreserveUnknownFields)
				require.True(t, *props[field].XPreserveUnknownFields)
			}
		}
		require.Equal(t, k.Versions, versions)
	}
}
