// Package crds reads the minimal test CRDs in this folder and checks that
// each has the shape of the kind an adapter declares, so that the CRDs the
// envtest suites install and the adapters cannot drift apart.
package crds

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Dir returns the absolute path of a folder of test CRDs, e.g. Dir("nim").
func Dir(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), rel)
}

// Load strictly decodes every *.yaml CRD in dir, keyed by "<group>/<Kind>".
func Load(t testing.TB, dir string) map[string]apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no CRDs in %s", dir)
	out := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.UnmarshalStrict(b, &crd), file)
		require.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion, file)
		require.Equal(t, "CustomResourceDefinition", crd.Kind, file)
		require.Equal(t, crd.Spec.Names.Plural+"."+crd.Spec.Group, crd.Name, file)
		out[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd
	}
	return out
}

// Check asserts that a test CRD serves exactly the kind's versions (one of
// them stored), under the kind's plural, namespaced, with a status
// subresource and spec and status that keep unknown fields. A kind is
// namespaced unless it declares itself cluster-scoped (referenced kinds).
func Check(t testing.TB, k adapter.Kind, crd apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	require.Equal(t, k.Group, crd.Spec.Group, k.String())
	require.Equal(t, k.Resource, crd.Spec.Names.Plural, k.String())
	scope := apiextensionsv1.NamespaceScoped
	if k.ClusterScoped {
		scope = apiextensionsv1.ClusterScoped
	}
	require.Equal(t, scope, crd.Spec.Scope, k.String())
	var served []string
	storage := 0
	for _, v := range crd.Spec.Versions {
		require.NotNil(t, v.Schema, k.String())
		props := v.Schema.OpenAPIV3Schema.Properties
		for _, field := range []string{"spec", "status"} {
			p, ok := props[field]
			require.True(t, ok, "%s %s: no %s schema", k, v.Name, field)
			require.Equal(t, "object", p.Type, "%s %s: %s", k, v.Name, field)
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
