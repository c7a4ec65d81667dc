package rbac_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// Generic roots under the shipped RBAC, which grants nothing on kinds no
// adapter declares: the cluster serves the operator's kind but the
// controller may not read it. The pods that name the same owner are still
// grouped under one AIBOM for it, as their controller references name it,
// never one per pod; the unreadable kind is said by a gauge.
func TestPodsOfAForbiddenOwnerKindAreGroupedUnderOneAIBOM(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "evalruns.eval.example.org"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "eval.example.org",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "EvalRun", ListKind: "EvalRunList", Plural: "evalruns", Singular: "evalrun"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	require.NoError(t, err)
	// The controller as the shipped ServiceAccount, every in-tree adapter.
	c, err := env.StartControllerWith(harness.ControllerOptions{Config: shipped.Impersonating(env.Config)}, harness.InTreeAdapters()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	ns := newNamespace(t)
	const digest = "4444444444444444444444444444444444444444444444444444444444444444"
	objs := env.MustApply(t, ns, `
apiVersion: eval.example.org/v1
kind: EvalRun
metadata: {name: mmlu}
spec: {harness: lm-eval}
---`+harness.PodYAML("mmlu-0", "eval.example.org/v1", "EvalRun", "mmlu", "server", "vllm/vllm-openai:v0.8.5", digest)+"---"+
		harness.PodYAML("mmlu-1", "eval.example.org/v1", "EvalRun", "mmlu", "server", "vllm/vllm-openai:v0.8.5", digest))
	owner := objs[0]

	evalGK := schema.GroupKind{Group: "eval.example.org", Kind: "EvalRun"}

	a := waitAIBOM(t, ns, evalGK, "mmlu", eventually, func(a *v1alpha1.AIBOM) bool {
		return strings.Contains(a.Status.Document, digest)
	})
	require.Equal(t, string(owner.GetUID()), a.Spec.Subject.UID, "the owner the references name, by UID")
	require.Contains(t, a.Status.Document, `"aibom.root.read","value":"false"`, "the controller may not read it")
	require.Equal(t, "vllm", a.Status.Summary.Runtime)
	waitOnlyAIBOMs(t, ns, eventually, "EvalRun/mmlu")
	require.Eventually(t, func() bool {
		return harness.MetricValue("aibom_generic_owner_kind_unreadable", map[string]string{"kind": "EvalRun.eval.example.org"}) == 1
	}, eventually, tick, "the unreadable owner kind is said")
	require.Positive(t, harness.MetricValue("aibom_generic_owner_unread_total", map[string]string{"kind": "EvalRun.eval.example.org"}))
}
