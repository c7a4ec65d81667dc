package lws

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// crdDir holds the test CRDs envtest installs for this adapter's kinds.
const crdDir = "../../test/crds/lws"

// TestCRDsMatchKinds checks that the test CRDs and Kinds() agree on group,
// kind, plural, scope and versions, so that fixtures and adapter cannot
// drift apart.
func TestCRDsMatchKinds(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	crds := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.UnmarshalStrict(b, &crd), file)
		require.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion, file)
		require.Equal(t, "CustomResourceDefinition", crd.Kind, file)
		require.Equal(t, crd.Spec.Names.Plural+"."+crd.Spec.Group, crd.Name, file)
		crds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd
	}
	for _, k := range New().Kinds() {
		crd, ok := crds[k.Group+"/"+k.Kind]
		require.True(t, ok, "no test CRD for %s in %s", k, crdDir)
		delete(crds, k.Group+"/"+k.Kind)
		if k.Kind == "LeaderWorkerSet" {
			require.Equal(t, []string{"lws"}, crd.Spec.Names.ShortNames)
		}
		checkCRD(t, k, crd)
	}
	require.Empty(t, crds, "test CRDs for kinds the adapter does not declare")
}

func checkCRD(t *testing.T, k adapter.Kind, crd apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	require.Equal(t, k.Resource, crd.Spec.Names.Plural, k.String())
	require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope, k.String())
	var served []string
	storage := 0
	for _, v := range crd.Spec.Versions {
		require.NotNil(t, v.Schema, k.String())
		props := v.Schema.OpenAPIV3Schema.Properties
		for _, field := range []string{"spec", "status"} {
			p, ok := props[field]
			require.True(t, ok, "%s %s: no %s schema", k, v.Name, field)
			require.NotNil(t, p.XPreserveUnknownFields, "%s %s: %s", k, v.Name, field)
			require.True(t, *p.XPreserveUnknownFields, "%s %s: %s", k, v.Name, field)
		}
		require.NotNil(t, v.Subresources, k.String())
		require.NotNil(t, v.Subresources.Status, k.String())
		if v.Served {
			served = append(served, v.Name)
		}
		if v.Storage {
			storage++
		}
	}
	require.Equal(t, 1, storage, k.String())
	want := append([]string(nil), k.Versions...)
	sort.Strings(want)
	sort.Strings(served)
	require.Equal(t, want, served, k.String())
}
