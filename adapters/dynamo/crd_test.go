package dynamo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
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
			files, err := filepath.Glob(filepath.Join("..", "..", "test", "crds", "dynamo", version, "*.yaml"))
			require.NoError(t, err)
			crds := map[string]apiextensionsv1.CustomResourceDefinition{}
			for _, file := range files {
				b, err := os.ReadFile(file)
				require.NoError(t, err)
				var crd apiextensionsv1.CustomResourceDefinition
				require.NoError(t, yaml.UnmarshalStrict(b, &crd), file)
				require.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion, file)
				require.Equal(t, "CustomResourceDefinition", crd.Kind, file)
				crds[crd.Spec.Names.Kind] = crd
			}
			require.Len(t, crds, len(kinds))
			for _, k := range kinds {
				crd, ok := crds[k.Kind]
				require.True(t, ok, "no CRD for %s", k)
				require.Equal(t, k.Resource+"."+k.Group, crd.Name)
				require.Equal(t, k.Group, crd.Spec.Group)
				require.Equal(t, k.Resource, crd.Spec.Names.Plural)
				require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
				require.Equal(t, []string{shortNames[k.Kind]}, crd.Spec.Names.ShortNames)
				require.Contains(t, k.Versions, version)
				require.Len(t, crd.Spec.Versions, 1)
				v := crd.Spec.Versions[0]
				require.Equal(t, version, v.Name)
				require.True(t, v.Served)
				require.True(t, v.Storage)
				require.NotNil(t, v.Subresources)
				require.NotNil(t, v.Subresources.Status)
				props := v.Schema.OpenAPIV3Schema.Properties
				for _, field := range []string{"spec", "status"} {
					require.Equal(t, "object", props[field].Type)
					require.NotNil(t, props[field].XPreserveUnknownFields)
					require.True(t, *props[field].XPreserveUnknownFields)
				}
			}
		})
	}
}
