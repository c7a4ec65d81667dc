package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// TestCRDForPeople: what `kubectl get aibom`, `kubectl get all` and
// `kubectl explain aibom` show, as the API server serves the chart's CRD.
func TestCRDForPeople(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Name: "aiboms.aibom.dev"}, crd))
	names := crd.Spec.Names
	require.Equal(t, []string{"aibom-all"}, names.Categories, "its own category (not \"all\", and not \"aibom\", its singular name)")
	require.NotContains(t, names.ShortNames, names.Singular, "a short name distinct from the singular")
	require.NotEmpty(t, names.ShortNames)

	version := crd.Spec.Versions[0]
	columns := map[string]apiextensionsv1.CustomResourceColumnDefinition{}
	var wide []string
	for _, c := range version.AdditionalPrinterColumns {
		columns[c.Name] = c
		if c.Priority > 0 {
			wide = append(wide, c.Name)
		}
	}
	require.Equal(t, `.status.conditions[?(@.type=="Ready")].status`, columns["Ready"].JSONPath)
	require.Zero(t, columns["Ready"].Priority, "Ready shows without -o wide")
	require.NotEmpty(t, wide, "-o wide adds columns")

	schema := version.Schema.OpenAPIV3Schema
	require.NotEmpty(t, schema.Description, "kubectl explain aibom")
	status := schema.Properties["status"]
	require.Contains(t, status.Properties, "observedGeneration")
	confidence := status.Properties["summary"].Properties["confidence"]
	var enum []string
	for _, e := range confidence.Enum {
		enum = append(enum, string(e.Raw))
	}
	require.Equal(t, []string{`"declared"`, `"inferred"`, `"unresolved"`}, enum)
	for name, p := range schema.Properties["spec"].Properties["subject"].Properties {
		require.NotEmpty(t, p.Description, "spec.subject.%s", name)
	}
}

// TestCRDSubjectIsImmutable: a subject's kind and name cannot change; its
// uid and apiVersion can (the controller re-points an AIBOM at a workload
// re-created under the same name). Confidence takes the enum's values only.
func TestCRDSubjectIsImmutable(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "crd", false)
	a := &v1alpha1.AIBOM{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployment-chat"},
		Spec:       v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "chat", UID: "u1"}},
	}
	require.NoError(t, env.Client.Create(ctx, a))

	repointed := a.DeepCopy()
	repointed.Spec.Subject.UID = "u2"
	require.NoError(t, env.Client.Update(ctx, repointed), "re-pointing at a re-created workload")

	for field, mutate := range map[string]func(*v1alpha1.Subject){
		"name": func(s *v1alpha1.Subject) { s.Name = "other" },
		"kind": func(s *v1alpha1.Subject) { s.Kind = "StatefulSet" },
	} {
		changed := repointed.DeepCopy()
		mutate(&changed.Spec.Subject)
		err := env.Client.Update(ctx, changed)
		require.True(t, apierrors.IsInvalid(err), "changing spec.subject.%s: %v", field, err)
		require.ErrorContains(t, err, "immutable")
	}

	bad := repointed.DeepCopy()
	bad.Status.Summary.Confidence = "certain"
	err := env.Client.Status().Update(ctx, bad)
	require.True(t, apierrors.IsInvalid(err), "an unknown confidence: %v", err)
}
